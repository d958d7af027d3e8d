"""The command line's exit codes (spec: Command line)."""

OK = 0
REFUSED = 1  # the hub refused, or a tool returned an error
USAGE = 2
UNREACHABLE = 69  # EX_UNAVAILABLE
TOKEN_REFUSED = 77  # EX_NOPERM
NOT_CONFIGURED = 78  # EX_CONFIG: no hub named, no admin token, or unusable settings
