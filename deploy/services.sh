#!/usr/bin/env bash
# Starts (up) or stops (down) every scale-mode server without Docker: PostgreSQL, Redis, Kafka 3.9 (KRaft),
# the chdb-http ClickHouse endpoint, and Debian's clickhouse-server 18.16 for the transport test.
# `up` writes the client settings to deploy/.cache/services.env (KEY=value lines) and prints them:
#
#   deploy/services.sh up && set -a && . deploy/.cache/services.env && set +a && npm start
#
# Env: SERVICES="postgres redis kafka clickhouse clickhouse-legacy" to choose a subset.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SERVICES="${SERVICES:-postgres redis kafka clickhouse clickhouse-legacy}"
ENV_FILE="$CACHE_DIR/services.env"
has() { [[ " $SERVICES " == *" $1 "* ]]; }

up() {
  : > "$ENV_FILE.tmp"
  if has postgres; then
    "$DEPLOY_DIR/postgres.sh" start
    echo "DATABASE_URL=postgres://${PG_USER:-runwatch}:${PG_PASSWORD:-runwatch}@127.0.0.1:${PG_PORT:-5432}/${PG_DB:-runwatch}" >> "$ENV_FILE.tmp"
  fi
  if has redis; then
    "$DEPLOY_DIR/redis.sh" start
    echo "REDIS_URL=redis://127.0.0.1:${REDIS_PORT:-6379}" >> "$ENV_FILE.tmp"
  fi
  if has kafka; then
    "$DEPLOY_DIR/kafka.sh" start
    echo "KAFKA_BROKERS=127.0.0.1:${KAFKA_PORT:-9092}" >> "$ENV_FILE.tmp"
  fi
  if has clickhouse; then
    "$DEPLOY_DIR/clickhouse.sh" start
    echo "CLICKHOUSE_URL=http://127.0.0.1:${CLICKHOUSE_PORT:-8124}" >> "$ENV_FILE.tmp"
  fi
  if has clickhouse-legacy; then
    "$DEPLOY_DIR/clickhouse.sh" start-legacy
    echo "CLICKHOUSE_LEGACY_URL=http://127.0.0.1:8123" >> "$ENV_FILE.tmp"
  fi
  mv "$ENV_FILE.tmp" "$ENV_FILE"
  log "all up; settings in $ENV_FILE:"
  cat "$ENV_FILE"
}

down() {
  local rc=0
  has clickhouse-legacy && { "$DEPLOY_DIR/clickhouse.sh" stop-legacy || rc=1; }
  has clickhouse && { "$DEPLOY_DIR/clickhouse.sh" stop || rc=1; }
  has kafka && { "$DEPLOY_DIR/kafka.sh" stop || rc=1; }
  has redis && { "$DEPLOY_DIR/redis.sh" stop || rc=1; }
  has postgres && { "$DEPLOY_DIR/postgres.sh" stop || rc=1; }
  return $rc
}

status() {
  "$DEPLOY_DIR/postgres.sh" status || true
  "$DEPLOY_DIR/redis.sh" status || true
  "$DEPLOY_DIR/kafka.sh" status || true
  "$DEPLOY_DIR/clickhouse.sh" status || true
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) die "usage: $0 up|down|status" ;;
esac
