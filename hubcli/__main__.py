from hubcli.main import run

run()
