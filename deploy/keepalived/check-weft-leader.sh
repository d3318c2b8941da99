#!/bin/sh
# keepalived health check: exits 0 only when the weft instance on this node is the LEADER.
# `GET /readyz?leader=1` answers 200 on the leader and 503 everywhere else (standby, store down,
# still starting), so the VIP follows leadership. Usage: check-weft-leader.sh [URL]
url="${1:-${WEFT_HEALTH_URL:-http://127.0.0.1:8080/readyz?leader=1}}"
# --fail: an HTTP error status is a failed check; --max-time: a hung weft is an unhealthy weft;
# --noproxy: a proxy set in the environment must never answer for the local instance.
exec curl --silent --fail --output /dev/null --max-time 1 --noproxy '*' "$url"
