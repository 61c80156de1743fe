// Package serversettings is what `confighash serve` publishes of its own
// flags for `confighash status` and `confighash preview`: the settings that
// change what they compute (which namespaces and kinds it serves, how large
// its waves and sources may be, the webhook configuration it registers
// in), so that their users need not repeat the server's flags and get a
// wrong answer when they forget one.
//
// # Decisions
//
//   - One ConfigMap, ConfigMapName in confighash's own namespace, one key
//     per setting, named after the serve flag, holding that flag's values
//     one a line. kubectl shows it as the flags read; a CLI sets its own
//     flag of the same meaning from it with that flag's own parser.
//   - The leader writes it, with server-side apply under
//     contract.FieldManager and forced ownership (Publisher): the settings
//     explain the hook, which runs on the leader, and a single writer
//     keeps replicas of two versions during a rolling upgrade from
//     rewriting it in turn. It is applied again every RepublishInterval,
//     which undoes an edit or a deletion.
//   - Tenants cannot write it: it lives where confighash keeps its key.
//     Readers still take it as input (Parse): a known key larger than the
//     bounds, a value its flag would refuse, is an error that names the
//     key; unknown keys are left alone, for a newer server's. The server
//     refuses to publish what a reader would refuse.
//   - A CLI given a flag uses the flag and says when it disagrees with the
//     published value; one that cannot read the ConfigMap (an older
//     server, no RBAC) says so and uses its flags and defaults.
package serversettings
