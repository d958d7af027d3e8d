from hubcli.entry import run

run()
