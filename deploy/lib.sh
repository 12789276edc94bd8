# Shared helpers for the deploy/*.sh scripts (sourced, not run).
# The scripts run as root on Debian (CI) or as a user with sudo; they never need Docker.
set -euo pipefail

DEPLOY_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_DIR="${RUNWATCH_DEPLOY_CACHE:-$DEPLOY_DIR/.cache}"
mkdir -p "$CACHE_DIR"

log() { printf '[%s] %s\n' "$(basename "$0" .sh)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# retry N CMD...: runs CMD up to N times with a growing pause (network hiccups on apt/mvn).
retry() {
  local n=$1 i=1; shift
  until "$@"; do
    if (( i >= n )); then return 1; fi
    log "attempt $i of $n failed: $*; retrying in $((i * 5))s"
    sleep $((i * 5)); i=$((i + 1))
  done
}

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

APT_UPDATED="${APT_UPDATED:-}"
# apt_install PKG...: installs missing Debian packages (apt-get update once per shell).
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  (( ${#missing[@]} == 0 )) && return 0
  if [[ -z "$APT_UPDATED" ]]; then retry 3 as_root apt-get update -qq; APT_UPDATED=1; export APT_UPDATED; fi
  log "apt-get install ${missing[*]}"
  retry 3 as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# port_open HOST PORT: true when something accepts TCP connections there.
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# wait_until SECONDS DESCRIPTION CMD...: polls CMD every 0.5 s until it succeeds or the time is up.
wait_until() {
  local secs=$1 what=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    (( SECONDS >= deadline )) && die "$what did not come up within ${secs}s"
    sleep 0.5
  done
}

# pid_alive PIDFILE: true when the pid file names a running process.
pid_alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# service_main [CMD]: runs the script's install, start, stop or status function for CMD (default start;
# restart = stop, then start). Called last by the service scripts: `service_main "$@"`.
service_main() {
  case "${1:-start}" in
    install) install ;;
    start) start ;;
    stop) stop ;;
    restart) stop; start ;;
    status) status ;;
    *) die "usage: $0 start|stop|restart|status|install" ;;
  esac
}
