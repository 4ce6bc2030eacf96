#!/usr/bin/env bash
# Entrypoint of the mm2cutover Kafka Connect worker (MirrorMaker 2 on Connect).
#
# Validates the environment, sets defaults, then execs the JVM so that SIGTERM from
# the container runtime reaches Kafka Connect directly: Connect stops its tasks,
# flushes and commits their source offsets, and leaves the group before exiting.
#
# The worker configuration is connect-mm2.properties next to this script (or
# MM2_CONF_DIR); it reads every value below through ${env:...}.
set -euo pipefail

die() {
  echo "docker-entrypoint: $*" >&2
  exit 64
}

# valid_port NAME VALUE: a decimal TCP port in 1..65535.
valid_port() {
  local name=$1 value=$2
  [[ $value =~ ^[0-9]{1,5}$ ]] && ((10#$value >= 1 && 10#$value <= 65535)) ||
    die "$name must be a TCP port number between 1 and 65535, got '$value'"
}

MM2_CONF_DIR=${MM2_CONF_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
KAFKA_HOME=${KAFKA_HOME:-/opt/kafka}
CONNECT_CONFIG_FILE=${CONNECT_CONFIG_FILE:-$MM2_CONF_DIR/connect-mm2.properties}

[[ -n ${CONNECT_BOOTSTRAP_SERVERS:-} ]] ||
  die "CONNECT_BOOTSTRAP_SERVERS is required: the target Kafka cluster that stores Connect's configs, offsets and status"
[[ -r $CONNECT_CONFIG_FILE ]] || die "worker configuration $CONNECT_CONFIG_FILE is not readable"
compgen -G "$KAFKA_HOME/libs/connect-mirror-*.jar" >/dev/null ||
  die "no connect-mirror jar under $KAFKA_HOME/libs: KAFKA_HOME must be an Apache Kafka distribution"

export CONNECT_GROUP_ID=${CONNECT_GROUP_ID:-mm2-connect}
export CONNECT_CONFIG_STORAGE_TOPIC=${CONNECT_CONFIG_STORAGE_TOPIC:-mm2-connect-configs}
export CONNECT_OFFSET_STORAGE_TOPIC=${CONNECT_OFFSET_STORAGE_TOPIC:-mm2-connect-offsets}
export CONNECT_STATUS_STORAGE_TOPIC=${CONNECT_STATUS_STORAGE_TOPIC:-mm2-connect-status}
export CONNECT_REPLICATION_FACTOR=${CONNECT_REPLICATION_FACTOR:-3}
[[ $CONNECT_REPLICATION_FACTOR =~ ^[1-9][0-9]*$ ]] ||
  die "CONNECT_REPLICATION_FACTOR must be a positive integer, got '$CONNECT_REPLICATION_FACTOR'"

export CONNECT_SECURITY_PROTOCOL=${CONNECT_SECURITY_PROTOCOL:-SASL_PLAINTEXT}
export CONNECT_SASL_MECHANISM=${CONNECT_SASL_MECHANISM:-PLAIN}
case $CONNECT_SECURITY_PROTOCOL in
  PLAINTEXT | SSL) export CONNECT_SASL_JAAS_CONFIG=${CONNECT_SASL_JAAS_CONFIG:-} ;;
  SASL_PLAINTEXT | SASL_SSL)
    [[ -n ${CONNECT_SASL_JAAS_CONFIG:-} ]] ||
      die "CONNECT_SASL_JAAS_CONFIG is required with CONNECT_SECURITY_PROTOCOL=$CONNECT_SECURITY_PROTOCOL (mount it from a Secret)"
    ;;
  *) die "CONNECT_SECURITY_PROTOCOL must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, got '$CONNECT_SECURITY_PROTOCOL'" ;;
esac

export CONNECT_REST_HOST=${CONNECT_REST_HOST:-0.0.0.0}
export CONNECT_REST_PORT=${CONNECT_REST_PORT:-8088}
valid_port CONNECT_REST_PORT "$CONNECT_REST_PORT"
if [[ -z ${POD_IP:-} ]]; then
  POD_IP=$(hostname -i 2>/dev/null | awk '{print $1}')
  [[ -n $POD_IP ]] || die "POD_IP is not set (set it from status.podIP through the Downward API)"
  echo "docker-entrypoint: POD_IP not set, advertising $POD_IP" >&2
fi
export POD_IP

java_opts=()
if [[ -n ${JMX_EXPORTER_PORT:-} ]]; then
  valid_port JMX_EXPORTER_PORT "$JMX_EXPORTER_PORT"
  JMX_EXPORTER_JAR=${JMX_EXPORTER_JAR:-/opt/jmx-exporter/jmx_prometheus_javaagent.jar}
  JMX_EXPORTER_CONFIG=${JMX_EXPORTER_CONFIG:-$MM2_CONF_DIR/jmx-exporter.yaml}
  [[ -r $JMX_EXPORTER_JAR ]] ||
    die "JMX_EXPORTER_PORT is set but the Prometheus JMX exporter agent $JMX_EXPORTER_JAR is missing; refusing to start without the metrics you asked for"
  [[ -r $JMX_EXPORTER_CONFIG ]] || die "JMX exporter configuration $JMX_EXPORTER_CONFIG is not readable"
  java_opts+=("-javaagent:$JMX_EXPORTER_JAR=$JMX_EXPORTER_PORT:$JMX_EXPORTER_CONFIG")
fi

# Word splitting of the *_OPTS variables is intended: they hold several JVM flags.
# shellcheck disable=SC2206
java_opts+=(
  ${KAFKA_HEAP_OPTS:--Xms1g -Xmx1g}
  ${KAFKA_JVM_PERFORMANCE_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true}
  ${KAFKA_OPTS:-}
)

exec java "${java_opts[@]}" \
  -Dlog4j2.configurationFile="$MM2_CONF_DIR/connect-log4j2.properties" \
  -Dlog4j.configuration="file:$MM2_CONF_DIR/connect-log4j.properties" \
  -cp "$KAFKA_HOME/libs/*" \
  org.apache.kafka.connect.cli.ConnectDistributed "$CONNECT_CONFIG_FILE"
