// Package gke is the only code that talks to the GKE API (container.googleapis.com) and to the
// Compute Engine API it needs: client construction and auth, retries, per-cluster locking,
// operation waiting and the translation of failures into causes a user can act on.
//
// # Retries
//
// Every call goes through one retry policy (retry.go; the client library's own retries are off).
// A failure is retried only when the same request may succeed later; a retry that waits is logged
// at INFO with the call, the attempt, the wait and the cause. Transient failures get at most
// Backoff.Attempts attempts (DefaultBackoff: five, about twenty seconds of waiting), and no wait runs
// past the caller's deadline: the provider bounds every Read, ModifyPlan and Open as well as each
// create, update and delete (its timeouts). A failure that no retry fixes is returned at once; when
// it keeps the provider from reaching GKE at all it is an *AccessError whose message says what to
// fix.
//
//	error class                                   retried            source
//	--------------------------------------------  -----------------  -------------------------------------------
//	503 UNAVAILABLE                               yes, capped        AIP-194 ("generally transient")
//	500 INTERNAL, 504 DEADLINE_EXCEEDED (server)  yes, capped        Cloud Storage "Retry strategy" (5xx)
//	409 ABORTED (a concurrent change won)         yes, capped        Google API design guide, "Errors" ("retry at
//	                                                                 a higher level": each attempt that sends a
//	                                                                 version reads it afresh)
//	429 rate limit (no "quota" in the message)    yes, capped        Cloud Storage "Retry strategy" (429)
//	429 quota exhausted                           no                 AIP-194 ("may not be expected to work for
//	                                                                 several hours")
//	cluster busy: 400 FAILED_PRECONDITION         yes, until the     GKE "Troubleshoot concurrent operations";
//	  "incompatible operation" and kin, 429        caller's deadline  terraform-provider-google #15205, #15579
//	  "concurrent operations quota"
//	connection refused, reset or timed out; DNS   yes, capped        Cloud Storage "Retry strategy" ("socket
//	  server not answering                                           timeouts and TCP disconnects")
//	host name does not exist (NXDOMAIN)           no (AccessError)   RFC 6761 §6.4 (.invalid never resolves);
//	                                                                 Go net.DNSError.IsNotFound
//	certificate does not verify                   no (AccessError)   Go crypto/tls CertificateVerificationError;
//	                                                                 INFERRED: a certificate stays what it is
//	token endpoint refuses the credentials        no (AccessError)   RFC 6749 §5.2 (invalid_grant: "expired,
//	  (4xx: invalid_grant, invalid_client, ...)                      revoked"); Google's answer "Token has been
//	                                                                 expired or revoked." (googleworkspace/
//	                                                                 python-samples #1644)
//	token endpoint 5xx or unreachable             yes, capped        INFERRED, as for any 5xx or network failure
//	401 UNAUTHENTICATED, 403 PERMISSION_DENIED    no                 Cloud Storage "Retry strategy" ("make
//	                                                                 changes, such as authorization")
//	400 INVALID_ARGUMENT, 404, 409 ALREADY_EXISTS, no                AIP-194 (INVALID_ARGUMENT "will never
//	  other FAILED_PRECONDITION, anything else                       succeed"); INFERRED for the rest
//
// # Shared reads
//
// A refresh or plan of many slices reads each one's cluster and node pool; within one provider
// process these reads share one read of the cluster (GetCluster), one list of its node pools
// (ListNodePools, or the pools a GetCluster answer holds) and one of the versions on offer
// (GetServerConfig) for SharedReadTTL, and sizes share one list of a zone's instance groups, so
// that a hundred slices cost a handful of requests, as terraform-provider-google's 30-second node
// pool cache does (resource_container_node_pool.go). Every write raytpu sends to a cluster's pools,
// every operation on them seen DONE and every creation seen through forgets that cluster's lists;
// a write to the cluster itself, or its operation, forgets its read too. So a read never sees a
// state older than raytpu's own write (but for the pools a cluster read holds: see reads.go); a
// read a write is computed from, or one that reads back a write, passes Fresh and reads the
// object itself.
//
// A create whose earlier attempt may have taken effect (its connection broke or a front end
// answered 5xx) and that a retry then finds already existing fails with *AlreadyCreatedError, so
// that the caller can check and adopt what its own lost request created.
package gke
