//! Unit tests of the fleet client.

use super::pods::{cut, message_verdict};
use super::*;
use crate::manifest::CONTAINER;
use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus, PodStatus,
};

fn pod(state: ContainerState, phase: &str) -> Pod {
    Pod {
        status: Some(PodStatus {
            phase: Some(phase.into()),
            container_statuses: Some(vec![ContainerStatus {
                name: CONTAINER.into(),
                image: "localhost/missing:1".into(),
                state: Some(state),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn the_termination_message_carries_the_verdict() {
    assert_eq!(message_verdict("verdict: pass\n"), Some(true));
    assert_eq!(message_verdict("verdict: fail"), Some(false));
    assert_eq!(message_verdict("error: no such directory"), None);
    assert_eq!(message_verdict("verdict: passed"), None);
}

#[test]
fn image_pull_errors_are_fatal_at_once() {
    for reason in ["ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull"] {
        let p = pod(
            ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some(reason.into()),
                    message: Some("pull access denied".into()),
                }),
                ..Default::default()
            },
            "Pending",
        );
        match judge_pod(&p) {
            PodState::Fatal(s) => {
                assert!(s.starts_with(reason), "{s}");
                assert!(s.contains("localhost/missing:1"), "{s}");
            }
            other => panic!("{reason}: {other:?}"),
        }
    }
    let creating = pod(
        ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some("ContainerCreating".into()),
                message: None,
            }),
            ..Default::default()
        },
        "Pending",
    );
    assert!(matches!(judge_pod(&creating), PodState::Waiting(_)));
}

#[test]
fn terminated_and_evicted_and_never_started() {
    let p = pod(
        ContainerState {
            terminated: Some(ContainerStateTerminated {
                exit_code: 137,
                reason: Some("OOMKilled".into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        "Failed",
    );
    assert_eq!(
        judge_pod(&p),
        PodState::Terminated(Terminated {
            exit_code: 137,
            reason: Some("OOMKilled".into()),
            message: None
        })
    );
    let ev = Pod {
        status: Some(PodStatus {
            phase: Some("Failed".into()),
            reason: Some("Evicted".into()),
            message: Some("The node was low on resource: ephemeral-storage.".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert!(
        matches!(judge_pod(&ev), PodState::Fatal(s) if s.starts_with("evicted: The node was low"))
    );
    let pending = Pod {
        status: Some(PodStatus {
            phase: Some("Pending".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert!(matches!(judge_pod(&pending), PodState::Waiting(s) if s.contains("never started")));
}

#[test]
fn cut_is_char_safe() {
    assert_eq!(cut("ééé", 2), "éé…");
    assert_eq!(cut(" ab ", 5), "ab");
}
