// Runs the conformance suite's own command line once per scenario, every run in this one Node
// process (run.py starts it; a Node start and the suite's 860 kB bundle cost about 0.35 s of CPU
// each, two dozen times a run otherwise).
//
//     node scenarios.mjs SUITE_INDEX_JS < runs.json
//
// stdin: a JSON list of runs, each {"label": str, "argv": [the suite's arguments]}. For each run the
// bundle is imported afresh (a new module instance: its scenarios, its state and its command line
// built again from nothing) with process.argv set to the run's arguments, as `node index.js ARGV`
// would see them. Its console output is captured, and the exit status it asks for with
// process.exit is its verdict's, as a process's would be; the first call counts (the suite returns
// from a run after asking to exit, and a skipped scenario asks twice). Each run prints one JSON
// line to stdout: {"label", "code", "text"}. A run that never asks to exit within TIMEOUT_MS (the
// suite's own per-scenario limit is 30 s) is reported with code 124.
import { pathToFileURL } from "node:url";
import { format } from "node:util";

const TIMEOUT_MS = 120_000;
const [node, suitePath] = [process.argv[0], process.argv[2]];
const suite = pathToFileURL(suitePath).href;
const runs = JSON.parse(await new Promise((resolve) => {
  let input = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => { input += chunk; });
  process.stdin.on("end", () => resolve(input));
}));

const exit = process.exit.bind(process);
const streams = ["log", "error", "warn", "info", "debug"];
const original = Object.fromEntries(streams.map((name) => [name, console[name]]));
const write = (line) => new Promise((resolve) => process.stdout.write(line + "\n", resolve));

for (const [index, run] of runs.entries()) {
  const lines = [];
  for (const name of streams) console[name] = (...args) => { lines.push(format(...args)); };
  let asked;
  const exited = new Promise((resolve) => { asked = resolve; });
  let code = null;
  process.exit = (status) => {
    if (code === null) {
      code = Number(status ?? process.exitCode ?? 0);
      asked();
    }
  };
  process.argv = [node, suitePath, ...run.argv];
  let timer;
  try {
    await import(`${suite}?run=${index}`);
    await Promise.race([exited, new Promise((resolve) => { timer = setTimeout(resolve, TIMEOUT_MS); })]);
  } catch (error) {
    lines.push(`the suite threw: ${error?.stack ?? error}`);
    if (code === null) code = 1;
  } finally {
    clearTimeout(timer);
    process.exit = exit;
    Object.assign(console, original);
  }
  if (code === null) {
    lines.push(`the suite did not finish within ${TIMEOUT_MS} ms`);
    code = 124;
  }
  await write(JSON.stringify({ label: run.label, code, text: lines.join("\n") }));
}
exit(0);
