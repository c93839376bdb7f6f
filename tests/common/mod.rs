//! Helpers shared by the integration tests. Each test crate uses only some of them.
#![allow(dead_code)]

pub mod cc;
pub mod firecracker_random;
pub mod floors;
pub mod libseccomp_firecracker;
pub mod libseccomp_names;
pub mod libseccomp_profiles;
pub mod ranges;
pub mod sweep;
pub mod terminal;
pub mod workloads;
