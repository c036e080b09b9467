//! The etcd chapter of the transcript.
