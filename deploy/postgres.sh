#!/usr/bin/env bash
# PostgreSQL from Debian (apt-get install postgresql), one cluster on 127.0.0.1, with a database and user.
#
#   deploy/postgres.sh start|stop|restart|status|install
#
# Env: PG_PORT (5432), PG_DB (runwatch), PG_USER (runwatch, with CREATEDB so tests can use a database each),
#      PG_PASSWORD (runwatch).
# Clients: DATABASE_URL=postgres://$PG_USER:$PG_PASSWORD@127.0.0.1:$PG_PORT/$PG_DB
# Uses the Debian cluster tooling (pg_createcluster/pg_ctlcluster): cluster "runwatch" of the installed major.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT="${PG_PORT:-5432}"
DB="${PG_DB:-runwatch}"
DB_USER="${PG_USER:-runwatch}"
DB_PASSWORD="${PG_PASSWORD:-runwatch}"
CLUSTER="${PG_CLUSTER:-runwatch}"

install() { command -v pg_createcluster >/dev/null && ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || apt_install postgresql; }

major() { ls /usr/lib/postgresql | sort -V | tail -1; }
ready() { pg_isready -h 127.0.0.1 -p "$PORT" -q; }
psql_admin() { as_root runuser -u postgres -- psql -h /var/run/postgresql -p "$PORT" -v ON_ERROR_STOP=1 -qAt "$@"; }

start() {
  install
  local v; v="$(major)"
  if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$v $CLUSTER"; then
    if port_open 127.0.0.1 "$PORT"; then
      log "port $PORT already serves a PostgreSQL not managed here; using it"
    else
      log "creating cluster $v/$CLUSTER on port $PORT"
      as_root pg_createcluster "$v" "$CLUSTER" -p "$PORT" -- --auth-local=peer --auth-host=scram-sha-256 >/dev/null
    fi
  fi
  if pg_lsclusters -h | awk '{print $1" "$2" "$4}' | grep -qx "$v $CLUSTER down"; then
    log "starting cluster $v/$CLUSTER"
    as_root pg_ctlcluster "$v" "$CLUSTER" start -- -o "-c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on"
  fi
  wait_until 60 "PostgreSQL" ready
  # Idempotent: user and database.
  psql_admin -d postgres -c "DO \$\$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER') THEN CREATE ROLE \"$DB_USER\" LOGIN CREATEDB PASSWORD '$DB_PASSWORD';
      ELSE ALTER ROLE \"$DB_USER\" LOGIN CREATEDB PASSWORD '$DB_PASSWORD'; END IF; END \$\$;"
  # Tests drop their per-run databases, which needs ending lingering sessions (dev/CI clusters only).
  psql_admin -d postgres -c "GRANT pg_signal_backend TO \"$DB_USER\""
  if [[ "$(psql_admin -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != "1" ]]; then
    psql_admin -d postgres -c "CREATE DATABASE \"$DB\" OWNER \"$DB_USER\""
  fi
  log "ready: DATABASE_URL=postgres://$DB_USER:$DB_PASSWORD@127.0.0.1:$PORT/$DB"
}

stop() {
  local v; v="$(major)"
  if pg_lsclusters -h | awk '{print $1" "$2" "$4}' | grep -qx "$v $CLUSTER online"; then
    as_root pg_ctlcluster "$v" "$CLUSTER" stop -m fast
  else log "not running"; fi
}

status() {
  if ready; then echo "postgres: running on 127.0.0.1:$PORT"; else echo "postgres: stopped"; return 3; fi
}

service_main "$@"
