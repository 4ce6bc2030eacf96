// Package app is the example binaries' own code, shared by
// examples/cutover (the CLI) and examples/job (the Kubernetes Job): the
// clients the settings open (Env; the settings themselves are package
// settings'), the JSONL audit (Audit), the exit statuses (ExitStatus, a
// table over errkind.Of), and one function per step that calls the
// library.
//
// It holds no rule that protects data: apply, resume, verify-after-resume
// and rollback are package cutover's sequences (cutover.Open, then one
// method per step), the read-only proofs and the precheck are package
// verify's, the plan and its guards package plan's. What the binaries
// print, and how, is theirs.
//
// The steps reach Kafka through Cluster (cutover.Cluster), so that their
// tests (steps_test.go) run apply, resume and rollback against
// connect/connectfake and clusters in memory (kafkaadmin/kafkafake), with
// no JVM; the precheck and the acceptance after resume take the
// kafkaadmin clients themselves.
package app
