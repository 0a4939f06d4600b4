// Package deploy holds no Go code for the programs: it is the home of the production
// deployment's files and of the tests that check them (go test ./deploy/), since no Docker
// engine runs in CI.
//
//	../docker-compose.yml, ../Dockerfile, ../.env.example   the deployment (docs/operations.md)
//	mosquitto/compose.conf, acl          the broker's listeners (1883 internal, 8883 TLS) and rights
//	mosquitto/mosquitto.conf             the tuned settings shared with the tests (internal/testkit/testenv)
//	prometheus/prometheus.yml, alerts.yml, bridges/   scraping and alert rules
//	grafana/provisioning/, dashboards/   the data sources and the fleet and pipeline dashboards
//	init-secrets.sh                      TLS certificates and the broker's password file
//	backup.sh                            backups of the monitor, the registry and InfluxDB
//	healthcheck/                         the container health check of the distroless image
//
// The tests parse the compose file, check that every file it mounts exists and every setting it
// interpolates is in .env.example, that no secret is written inline, that the Dockerfile copies
// every package the programs import, that the dashboards' Flux queries name measurements and
// fields ingest writes and their PromQL metrics the programs register (by registering them),
// that the alert rules do too, and they run the broker's configuration, ACL and password file in
// a real Mosquitto.
package deploy
