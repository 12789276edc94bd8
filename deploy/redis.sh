#!/usr/bin/env bash
# Redis from Debian (apt-get install redis-server), run as a plain process (no systemd needed).
#
#   deploy/redis.sh start|stop|restart|status|install
#
# Env: REDIS_PORT (6379), REDIS_DIR (deploy/.cache/redis-run: pid, log, dump).
# Clients: REDIS_URL=redis://127.0.0.1:$REDIS_PORT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT="${REDIS_PORT:-6379}"
RUN_DIR="${REDIS_DIR:-$CACHE_DIR/redis-run}"
PIDFILE="$RUN_DIR/redis.pid"

install() { command -v redis-server >/dev/null || apt_install redis-server redis-tools; }

ping() { [[ "$(redis-cli -h 127.0.0.1 -p "$PORT" ping 2>/dev/null)" == "PONG" ]]; }

start() {
  if pid_alive "$PIDFILE" && ping; then log "already running on 127.0.0.1:$PORT"; return 0; fi
  install
  if ping; then log "a Redis already answers on 127.0.0.1:$PORT; using it"; return 0; fi
  port_open 127.0.0.1 "$PORT" && die "port $PORT is taken by another process (a system redis? stop it or set REDIS_PORT)"
  mkdir -p "$RUN_DIR"
  # Rate-limit counters and pub/sub are ephemeral: no persistence, so a restart starts from a clean slate.
  redis-server --bind 127.0.0.1 --port "$PORT" --daemonize yes --pidfile "$PIDFILE" \
    --logfile "$RUN_DIR/redis.log" --dir "$RUN_DIR" --save "" --appendonly no --protected-mode yes
  wait_until 20 "Redis" ping
  log "ready: REDIS_URL=redis://127.0.0.1:$PORT"
}

stop() {
  if ! pid_alive "$PIDFILE"; then log "not running"; return 0; fi
  local pid; pid="$(cat "$PIDFILE")"
  log "stopping Redis (pid $pid)"
  redis-cli -h 127.0.0.1 -p "$PORT" shutdown nosave >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$PIDFILE"
}

status() {
  if ping; then echo "redis: running on 127.0.0.1:$PORT"; else echo "redis: stopped"; return 3; fi
}

service_main "$@"
