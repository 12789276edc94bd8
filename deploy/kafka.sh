#!/usr/bin/env bash
# Apache Kafka 3.9 (KRaft, one combined broker+controller) without Docker:
# jars from Maven Central via `mvn dependency:copy-dependencies` (deploy/kafka/pom.xml) into deploy/.cache,
# then `java -cp` kafka.Kafka after `kafka.tools.StorageTool format`.
#
#   deploy/kafka.sh start|stop|restart|status|install
#
# Env: KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093), KAFKA_DIR (deploy/.cache/kafka-run: data, logs, pid),
#      KAFKA_HEAP_OPTS (-Xms256m -Xmx768m). Needs java ≥ 11 and maven (apt-get install default-jre-headless maven).
# Clients: KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT="${KAFKA_PORT:-9092}"
CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
RUN_DIR="${KAFKA_DIR:-$CACHE_DIR/kafka-run}"
LIBS="$CACHE_DIR/kafka/libs"
PIDFILE="$RUN_DIR/kafka.pid"
HEAP="${KAFKA_HEAP_OPTS:--Xms256m -Xmx768m}"

install() {
  command -v java >/dev/null || apt_install default-jre-headless
  command -v mvn >/dev/null || apt_install maven
  if [[ -f "$LIBS/.complete" ]]; then return 0; fi
  log "fetching Kafka jars from Maven Central into $LIBS"
  rm -rf "$LIBS"; mkdir -p "$LIBS"
  retry 3 mvn -q -B -Dstyle.color=never -f "$DEPLOY_DIR/kafka/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$LIBS"
  ls "$LIBS"/kafka_2.13-*.jar >/dev/null || die "kafka_2.13 jar missing after mvn"
  touch "$LIBS/.complete"
}

write_config() {
  mkdir -p "$RUN_DIR/data" "$RUN_DIR/logs"
  cat > "$RUN_DIR/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$RUN_DIR/data
num.partitions=12
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=12
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
log.retention.hours=168
log.segment.bytes=268435456
PROPS
  cat > "$RUN_DIR/log4j.properties" <<PROPS
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.RollingFileAppender
log4j.appender.file.File=$RUN_DIR/logs/server.log
log4j.appender.file.MaxFileSize=50MB
log4j.appender.file.MaxBackupIndex=2
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
PROPS
}

java_cp() { java $HEAP -Dlog4j.configuration="file:$RUN_DIR/log4j.properties" -cp "$LIBS/*" "$@"; }

broker_ready() { port_open 127.0.0.1 "$PORT" && grep -q "Kafka Server started" "$RUN_DIR/logs/server.log" 2>/dev/null; }

start() {
  if pid_alive "$PIDFILE"; then log "already running (pid $(cat "$PIDFILE")) on 127.0.0.1:$PORT"; return 0; fi
  port_open 127.0.0.1 "$PORT" && die "port $PORT is taken by another process"
  install
  write_config
  if [[ ! -f "$RUN_DIR/data/meta.properties" ]]; then
    local cluster_id
    cluster_id="$(java_cp kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)"
    log "formatting KRaft storage (cluster $cluster_id)"
    java_cp kafka.tools.StorageTool format -t "$cluster_id" -c "$RUN_DIR/server.properties" >/dev/null
  fi
  # Fresh log file per start so broker_ready only sees this start's "started" line.
  [[ -f "$RUN_DIR/logs/server.log" ]] && mv "$RUN_DIR/logs/server.log" "$RUN_DIR/logs/server.log.prev"
  log "starting Kafka on 127.0.0.1:$PORT (logs: $RUN_DIR/logs)"
  nohup java $HEAP -XX:+UseG1GC -Djava.awt.headless=true \
    -Dlog4j.configuration="file:$RUN_DIR/log4j.properties" -Dkafka.logs.dir="$RUN_DIR/logs" \
    -cp "$LIBS/*" kafka.Kafka "$RUN_DIR/server.properties" >"$RUN_DIR/logs/stdout.log" 2>&1 &
  echo $! > "$PIDFILE"
  wait_until 90 "Kafka" broker_ready
  log "ready: KAFKA_BROKERS=127.0.0.1:$PORT"
}

stop() {
  if ! pid_alive "$PIDFILE"; then log "not running"; rm -f "$PIDFILE"; return 0; fi
  local pid; pid="$(cat "$PIDFILE")"
  log "stopping Kafka (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then log "still alive after 30s; SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; sleep 1; fi
  rm -f "$PIDFILE"
}

status() {
  if pid_alive "$PIDFILE" && broker_ready; then echo "kafka: running on 127.0.0.1:$PORT (pid $(cat "$PIDFILE"))"
  else echo "kafka: stopped"; return 3; fi
}

service_main "$@"
