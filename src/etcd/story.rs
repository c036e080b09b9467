//! The transcript's etcd chapter.
