//! Connecting: the client from the kubeconfig (or the in-cluster service account), checked to
//! reach an API server before anything else is asked of it.

use super::{kubeconfig, limits, ClientOptions};
use crate::error::{FleetError, Result};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use limits::FIRST_ANSWER;

/// A client from the options (must be called inside the runtime), checked to reach its API
/// server: a refused connection is an error that names the server, not kube's bare
/// `ServiceError: client error (Connect)` at the first real call.
pub async fn client(opts: &ClientOptions) -> Result<Client> {
    kubeconfig::check(&kubeconfig::paths(opts.kubeconfig.as_deref()))?;
    let kopts = KubeConfigOptions {
        context: opts.context.clone(),
        ..Default::default()
    };
    let config = match &opts.kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path).map_err(|err| FleetError::Kubeconfig {
                path: path.clone(),
                err,
            })?;
            Config::from_custom_kubeconfig(kc, &kopts)
                .await
                .map_err(|err| FleetError::Config {
                    from: Some(path.display().to_string()),
                    err,
                })?
        }
        None if opts.context.is_some() => {
            Config::from_kubeconfig(&kopts)
                .await
                .map_err(|err| FleetError::Config {
                    from: Some(kubeconfig_source()),
                    err,
                })?
        }
        // What `Config::infer` does, with its two errors kept apart: its own text quotes the
        // kubeconfig's YAML error, which may show a line holding a token.
        None => match Config::from_kubeconfig(&kopts).await {
            Ok(c) => c,
            Err(kubeconfig) => Config::incluster().map_err(|e| FleetError::NoConfig {
                from: kubeconfig_source(),
                kubeconfig,
                in_cluster: e.to_string(),
            })?,
        },
    };
    let server = config.cluster_url.to_string();
    let client = kube::client::ClientBuilder::try_from(config)
        .map_err(FleetError::Client)?
        .with_layer(&limits::layer())
        .build();
    // kube leaves responses without a time limit (its watches wait on purpose), so a server
    // that takes the connection and never answers held `fleet run` and `fleet clean` for good
    // (QA: killed after 8 minutes). Its first answer is waited for this long.
    let answer = tokio::time::timeout(FIRST_ANSWER, client.apiserver_version()).await;
    match answer {
        // Every API server has /version (401 or 403 to a client it refuses): a 404 is another
        // kind of server, whose HTML page kube would otherwise print whole at the next call
        // (QA: "listing Jobs in namespace disktier: <!DOCTYPE HTML>...").
        Ok(Err(kube::Error::Api(s))) if s.code == 404 => Err(FleetError::NotKubernetes {
            server,
            path: "/version",
        }),
        // Credentials it does not take (an expired token or certificate) would fail every
        // later call as a bare 'Unauthorized (401 Unauthorized)' (QA: 'reading namespace
        // disktier: Unauthorized (401 Unauthorized)'): said once, with the fix.
        Ok(Err(kube::Error::Api(s))) if s.code == 401 => {
            Err(FleetError::Unauthenticated { server })
        }
        // An answer, even a refusal (403), is a server that is there: the calls that
        // follow say what it refuses.
        Ok(Ok(_)) | Ok(Err(kube::Error::Api(_))) => Ok(client),
        Ok(Err(e)) => Err(FleetError::Unreachable {
            server,
            why: crate::error::describe(&e),
        }),
        Err(_) => Err(FleetError::Unreachable {
            server,
            why: format!(
                "it took the connection but sent no answer to GET /version within {} s",
                FIRST_ANSWER.as_secs()
            ),
        }),
    }
}

/// Where kube looks for a kubeconfig without `--kubeconfig`, in words.
fn kubeconfig_source() -> String {
    match std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
        Some(v) => format!("$KUBECONFIG={}", v.to_string_lossy()),
        None => "~/.kube/config".into(),
    }
}
