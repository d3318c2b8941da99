#!/bin/sh
# Renders keepalived.conf.tmpl (or the template given as $1) to stdout, replacing each ${NAME}
# with the environment variable NAME. Fails, naming the variable, when one is not set, so that a
# half-configured node never starts keepalived with an empty VIP or peer.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
template="${1:-$here/keepalived.conf.tmpl}"

# Defaults for the knobs that rarely change (docs/HA.md, "keepalived timers").
: "${KEEPALIVED_VRID:=51}"
: "${KEEPALIVED_PRIORITY:=100}"
: "${KEEPALIVED_ADVERT_INT:=0.2}"
: "${KEEPALIVED_CHECK_INTERVAL:=1}"
: "${KEEPALIVED_CHECK_FALL:=2}"
: "${KEEPALIVED_CHECK_SCRIPT:=$here/check-weft-leader.sh}"
: "${WEFT_HEALTH_URL:=http://127.0.0.1:8080/readyz?leader=1}"
export KEEPALIVED_VRID KEEPALIVED_PRIORITY KEEPALIVED_ADVERT_INT KEEPALIVED_CHECK_INTERVAL \
  KEEPALIVED_CHECK_FALL KEEPALIVED_CHECK_SCRIPT WEFT_HEALTH_URL

# awk reads the values from its environment: no quoting trouble with '/', '&' or '?' in them.
awk '
  {
    line = $0
    out = ""
    while (match(line, /\$\{[A-Za-z_][A-Za-z0-9_]*\}/)) {
      name = substr(line, RSTART + 2, RLENGTH - 3)
      if (!(name in ENVIRON) || ENVIRON[name] == "") {
        print "render-config.sh: " name " is not set (needed by line " NR ")" > "/dev/stderr"
        exit 2
      }
      out = out substr(line, 1, RSTART - 1) ENVIRON[name]
      line = substr(line, RSTART + RLENGTH)
    }
    print out line
  }
' "$template"
