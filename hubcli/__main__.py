from hubcli.entry import run

# Guarded: the push sender's worker process (anyio.to_process) loads the parent's main module, as
# multiprocessing does, under another name; unguarded, `python -m hubcli serve` would serve again there.
if __name__ == "__main__":
    run()
