// Scripts in an HTML artifact: off until the human turns them on here (GET/PUT /artifacts/:id/scripts).
// While off, the hub serves the frame with no script at all, which is what keeps a hostile artifact
// off the network (no CSP directive Chromium honours stops WebRTC); turning them on says so first.
import { h, fill } from "../../dom.js";
import { busy, errorText } from "./common.js";

const WARNING = "Its scripts can then send what it shows, and the fact that you opened it, to anywhere " +
  "over WebRTC. Turn them on only for an artifact you trust.";

// A button showing the setting and flipping it; `changed` redraws the frame afterwards.
export function scriptsToggle(app, artifact, changed) {
  const path = `/artifacts/${encodeURIComponent(artifact.id)}/scripts`;
  const node = h("span", { class: "art-scripts" });
  const draw = (on) => {
    const b = h("button", { type: "button", class: "btn", "aria-pressed": on ? "true" : "false" },
      on ? "Scripts on: turn off" : "Scripts off: turn on");
    b.addEventListener("click", () => busy(b, () => flip(!on)));
    fill(node, b);
  };
  const flip = async (on) => {
    if (on) {
      const choice = await app.dialog({ title: "Run this artifact's scripts?", body: h("p", {}, WARNING),
        actions: [{ label: "Cancel", value: null }, { label: "Turn scripts on", value: "on", danger: true }],
        focus: null });
      if (choice !== "on") return;
    }
    try {
      const found = await app.api.put(path, { scripts: on });
      draw(found.scripts);
      app.toast(found.scripts ? "Scripts on for this artifact" : "Scripts off for this artifact");
      await changed();
    } catch (err) {
      app.toast(errorText(err), { kind: "error" });
    }
  };
  app.api.get(path).then((found) => draw(found.scripts), () => fill(node));
  return node;
}
