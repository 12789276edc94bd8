#!/usr/bin/env bash
# ClickHouse for scale mode without Docker.
#
# No modern ClickHouse server installs from Debian here (bookworm ships clickhouse-server 18.16, which lacks
# DateTime64 and query parameters, so Runwatch's schema cannot run on it). Two endpoints, both honest about
# what they are (docs/SCALE.md):
#
#   deploy/clickhouse.sh start|stop|status         chdb-http: the real ClickHouse engine (chDB 26.x) served over
#                                                  ClickHouse's HTTP interface (the subset @clickhouse/client
#                                                  uses) on 127.0.0.1:$CLICKHOUSE_PORT (8124), so several
#                                                  processes share one ClickHouse. CLICKHOUSE_URL=http://127.0.0.1:8124
#   deploy/clickhouse.sh start-legacy|stop-legacy  Debian's clickhouse-server 18.16 on 127.0.0.1:8123, to test the
#                                                  @clickhouse/client transport where 18.16 can answer.
#                                                  CLICKHOUSE_LEGACY_URL=http://127.0.0.1:8123
#
# With a real ClickHouse ≥ 22 (docker-compose.yml, a package from packages.clickhouse.com, ClickHouse Cloud),
# set CLICKHOUSE_URL to it instead; nothing else changes.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROOT="$(cd "$DEPLOY_DIR/.." && pwd)"
PORT="${CLICKHOUSE_PORT:-8124}"
RUN_DIR="${CLICKHOUSE_DIR:-$CACHE_DIR/chdb-http-run}"
PIDFILE="$RUN_DIR/chdb-http.pid"
LEGACY_PORT=8123
LEGACY_DIR="$CACHE_DIR/clickhouse-legacy-run"
LEGACY_PIDFILE="$LEGACY_DIR/clickhouse.pid"

ping_url() { [[ "$(curl -fsS --max-time 2 "$1/ping" 2>/dev/null)" == "Ok." ]]; }

start() {
  if pid_alive "$PIDFILE" && ping_url "http://127.0.0.1:$PORT"; then log "chdb-http already running on 127.0.0.1:$PORT"; return 0; fi
  [[ -d "$ROOT/node_modules/chdb" ]] || die "node_modules missing: run npm ci first (chdb-http uses the chdb package)"
  port_open 127.0.0.1 "$PORT" && die "port $PORT is taken by another process"
  mkdir -p "$RUN_DIR/data"
  log "starting chdb-http on 127.0.0.1:$PORT (data $RUN_DIR/data)"
  nohup node --import "$ROOT/node_modules/tsx/dist/esm/index.mjs" "$DEPLOY_DIR/clickhouse/chdb-http.ts" \
    --port "$PORT" --data "$RUN_DIR/data" >"$RUN_DIR/chdb-http.log" 2>&1 </dev/null &
  echo $! > "$PIDFILE"
  wait_until 60 "chdb-http" ping_url "http://127.0.0.1:$PORT"
  log "ready: CLICKHOUSE_URL=http://127.0.0.1:$PORT"
}

stop_pid() {
  local pidfile=$1 what=$2
  if ! pid_alive "$pidfile"; then log "$what not running"; rm -f "$pidfile"; return 0; fi
  local pid; pid="$(cat "$pidfile")"
  log "stopping $what (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}

start_legacy() {
  if ping_url "http://127.0.0.1:$LEGACY_PORT"; then log "clickhouse-server already answers on 127.0.0.1:$LEGACY_PORT"; return 0; fi
  [[ -x /usr/sbin/clickhouse-server ]] || apt_install clickhouse-server
  mkdir -p "$LEGACY_DIR"
  log "starting Debian clickhouse-server $(dpkg-query -W -f='${Version}' clickhouse-server 2>/dev/null) on 127.0.0.1:$LEGACY_PORT"
  local sudo=(); [[ $(id -u) -eq 0 ]] || sudo=(sudo)
  "${sudo[@]}" runuser -u clickhouse -- /usr/sbin/clickhouse-server --config=/etc/clickhouse-server/config.xml \
    >"$LEGACY_DIR/stdout.log" 2>&1 </dev/null &
  local runuser_pid=$!
  wait_until 60 "clickhouse-server 18.16" ping_url "http://127.0.0.1:$LEGACY_PORT"
  # runuser forks the server; remember the server itself (other clickhouse-servers may run on this machine).
  local server_pid
  server_pid="$(pgrep -P "$runuser_pid" -x clickhouse-serv || pgrep -P "$(pgrep -P "$runuser_pid" | head -1)" -x clickhouse-serv || true)"
  echo "${server_pid:-$runuser_pid}" | head -1 > "$LEGACY_PIDFILE"
  log "ready: CLICKHOUSE_LEGACY_URL=http://127.0.0.1:$LEGACY_PORT"
}

stop_legacy() { stop_pid "$LEGACY_PIDFILE" "clickhouse-server"; }

status() {
  local rc=0
  if ping_url "http://127.0.0.1:$PORT"; then echo "chdb-http: running on 127.0.0.1:$PORT"; else echo "chdb-http: stopped"; rc=3; fi
  if ping_url "http://127.0.0.1:$LEGACY_PORT"; then echo "clickhouse-server (legacy): running on 127.0.0.1:$LEGACY_PORT"; fi
  return $rc
}

case "${1:-start}" in
  start) start ;;
  stop) stop_pid "$PIDFILE" "chdb-http" ;;
  restart) stop_pid "$PIDFILE" "chdb-http"; start ;;
  start-legacy) start_legacy ;;
  stop-legacy) stop_legacy ;;
  status) status ;;
  *) die "usage: $0 start|stop|restart|status|start-legacy|stop-legacy" ;;
esac
