//! The lab's blocking face of the `etcd-client` crate: leases, the lock
//! service, and the watch that tells when a lock key is gone.
//!
//! `etcd-client` is asynchronous; a [`Coordinator`] owns a small tokio
//! runtime (one worker thread, where a lease's keep-alive runs) and blocks
//! on each call, so the rest of the lab stays synchronous.

use std::future::Future;
use std::time::Duration;

use etcd_client::{Client, ConnectOptions, EventType, GetOptions, LockOptions, WatchOptions};

use crate::LabError;

/// How many times a call refused during an election is tried again.
const RETRIES: u32 = 50;
/// How long to let an election go on before trying again (an election
/// takes about one election timeout, a second here).
const BETWEEN_RETRIES: Duration = Duration::from_millis(100);

/// Whether etcd refused a call because it has no leader right now.
fn between_leaders(error: &etcd_client::Error) -> bool {
    match error {
        etcd_client::Error::TransportError(_) => true,
        etcd_client::Error::GRpcStatus(status) => {
            let message = status.message();
            status.code() == tonic::Code::Unavailable
                || message.contains("leader")
                || message.contains("timed out")
        }
        _ => false,
    }
}

/// A connection to the cluster, with the names of one test (or one story)
/// kept apart from every other's under `namespace`.
pub struct Coordinator {
    runtime: tokio::runtime::Runtime,
    client: Client,
    namespace: String,
}

/// Who holds a lock now: the lock key with the lowest create revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The lock key (`<lock name>/<lease in hex>`).
    pub key: String,
    /// The lease the key is attached to.
    pub lease: i64,
    /// The revision that created the key.
    pub revision: i64,
}

impl Coordinator {
    /// Connects to `endpoints` (client URLs), with every lock name under
    /// `namespace`.
    pub fn connect(endpoints: &[String], namespace: &str) -> Result<Coordinator, LabError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("etcd-client")
            .enable_all()
            .build()
            .map_err(|error| {
                LabError::CoordinatorUnavailable(format!("cannot start a runtime: {error}"))
            })?;
        let options = ConnectOptions::new().with_connect_timeout(Duration::from_secs(10));
        let client = runtime.block_on(Client::connect(endpoints, Some(options)))?;
        Ok(Coordinator {
            runtime,
            client,
            namespace: namespace.to_owned(),
        })
    }

    fn run<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// Runs `call` on a clone of the client; if etcd answers that it is
    /// between leaders (an election, after a failure or under load), tries
    /// again, up to [`RETRIES`] times, [`BETWEEN_RETRIES`] apart. Every call
    /// retried this way is idempotent: a lock under the same lease takes the
    /// same key. No claim's outcome depends on this wait: it only keeps an
    /// election from failing a test as a harness error.
    fn retrying<T, Fut>(&self, mut call: impl FnMut(Client) -> Fut) -> Result<T, LabError>
    where
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        let mut attempt = 0;
        loop {
            match self.run(call(self.client.clone())) {
                Err(error) if attempt < RETRIES && between_leaders(&error) => {
                    attempt += 1;
                    // Made inside the runtime: `tokio::time::sleep` needs
                    // its context when it is called, not only when awaited.
                    self.run(async { tokio::time::sleep(BETWEEN_RETRIES).await });
                }
                result => return result.map_err(LabError::from),
            }
        }
    }

    /// The lock name of `resource` in this namespace.
    pub fn lock_name(&self, resource: &str) -> String {
        format!("{}/locks/{resource}", self.namespace)
    }

    /// Grants a lease of `ttl` seconds and keeps it alive from this
    /// process, a third of the TTL at a time, for as long as the process
    /// runs (and is not frozen): etcd's own session, as its `concurrency`
    /// package keeps one.
    pub fn grant_lease(&mut self, ttl: i64) -> Result<i64, LabError> {
        let id = self
            .retrying(|mut client| async move { client.lease_grant(ttl, None).await })?
            .id();
        let (mut keeper, mut replies) =
            self.retrying(|mut client| async move { client.lease_keep_alive(id).await })?;
        let every = Duration::from_millis(u64::try_from(ttl.max(1)).unwrap_or(1) * 1000 / 3);
        self.runtime.spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                if keeper.keep_alive().await.is_err() {
                    break;
                }
                // A revoked or expired lease answers with a TTL of 0.
                match replies.message().await {
                    Ok(Some(reply)) if reply.ttl() > 0 => {}
                    _ => break,
                }
            }
        });
        Ok(id)
    }

    /// Takes the lock of `resource` under `lease`, waiting while another
    /// holds it. Returns the lock key and the revision that created it.
    pub fn lock(&mut self, resource: &str, lease: i64) -> Result<(String, i64), LabError> {
        let name = self.lock_name(resource);
        let locked = self.retrying(|mut client| {
            let name = name.clone();
            async move {
                client
                    .lock(name, Some(LockOptions::new().with_lease(lease)))
                    .await
            }
        })?;
        let key = locked.key().to_vec();
        let found = self.retrying(|mut client| {
            let key = key.clone();
            async move { client.get(key, None).await }
        })?;
        let revision = found
            .kvs()
            .first()
            .map(|kv| kv.create_revision())
            .ok_or_else(|| {
                LabError::CoordinatorUnavailable("the lock key vanished as it was granted".into())
            })?;
        Ok((String::from_utf8_lossy(&key).into_owned(), revision))
    }

    /// Revokes `lease`: its lock keys are deleted, the lock passes on. The
    /// tests revoke a frozen worker's lease where a real one would expire.
    pub fn revoke(&mut self, lease: i64) -> Result<(), LabError> {
        self.retrying(|mut client| async move { client.lease_revoke(lease).await })?;
        Ok(())
    }

    /// How many seconds `lease` has left: -1 once it is revoked or has run
    /// out (etcd's answer for a lease it does not know).
    pub fn time_to_live(&mut self, lease: i64) -> Result<i64, LabError> {
        Ok(self
            .retrying(|mut client| async move { client.lease_time_to_live(lease, None).await })?
            .ttl())
    }

    /// Who holds the lock of `resource`, if anyone.
    pub fn holder(&mut self, resource: &str) -> Result<Option<Holder>, LabError> {
        let prefix = format!("{}/", self.lock_name(resource));
        let found = self.retrying(|mut client| {
            let prefix = prefix.clone();
            async move {
                client
                    .get(prefix, Some(GetOptions::new().with_prefix()))
                    .await
            }
        })?;
        Ok(found
            .kvs()
            .iter()
            .min_by_key(|kv| kv.create_revision())
            .map(|kv| Holder {
                key: String::from_utf8_lossy(kv.key()).into_owned(),
                lease: kv.lease(),
                revision: kv.create_revision(),
            }))
    }

    /// Returns once `key` no longer exists: at once if it is gone, else
    /// when a watch from the revision it was read at sees it deleted (by an
    /// unlock, a revoke, or its lease running out).
    pub fn wait_until_deleted(&mut self, key: &str) -> Result<(), LabError> {
        let mut client = self.client.clone();
        self.run(async move {
            let found = client.get(key, None).await?;
            if found.kvs().is_empty() {
                return Ok(());
            }
            let from = found.header().map_or(0, |header| header.revision()) + 1;
            let mut stream = client
                .watch(key, Some(WatchOptions::new().with_start_revision(from)))
                .await?;
            while let Some(reply) = stream.message().await? {
                if reply
                    .events()
                    .iter()
                    .any(|event| event.event_type() == EventType::Delete)
                {
                    return Ok(());
                }
            }
            Err(LabError::CoordinatorUnavailable(format!(
                "the watch on {key} ended before the key was deleted"
            )))
        })
    }
}
