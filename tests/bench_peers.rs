//! The benchmark's libseccomp variants are exactly the programs the system libseccomp builds
//! for the profile when driven the way Docker and runc drive it (the independent conversion
//! in `tests/common/libseccomp_profiles.rs`, which never uses secopt's profile parser).
#![cfg(feature = "libseccomp")]

mod common;

use common::libseccomp_profiles::{build_filter, load_profile, profile_path, ProfileOptions};
use secopt::arch::Arch;
use secopt::bench::peers;
use secopt::policy::{self, KernelVersion, ResolveOptions};

fn bench_variants(relative: &str) -> Vec<secopt::bench::Variant> {
    let path = profile_path(relative);
    let bytes = std::fs::read(&path).unwrap();
    let policy = policy::oci::parse(&bytes, relative).unwrap();
    let options = ResolveOptions {
        native: Some(Arch::X86_64),
        kernel: Some(KernelVersion::new(6, 18)),
        ..Default::default()
    };
    let resolved = policy::resolve(&policy, &options).unwrap();
    peers::libseccomp_variants(&policy, &resolved).unwrap()
}

#[test]
fn libseccomp_variants_are_what_runc_would_load() {
    for profile in [
        "oci/docker-default.json",
        "oci/podman-containers-common-default.json",
        "oci/runc-integration-seccomp_syscall_test1.json",
        "oci/spo-nginx-1.19.1.json",
    ] {
        let variants = bench_variants(profile);
        let json = load_profile(profile).unwrap();
        for (v, optimize) in variants.iter().zip([1, 2]) {
            let reference = build_filter(
                &json,
                &ProfileOptions {
                    optimize,
                    ..ProfileOptions::default()
                },
            )
            .unwrap();
            assert!(
                v.source.as_ref() == Some(&reference.program),
                "{profile} optimize={optimize}: {} vs {} instructions",
                v.source.as_ref().unwrap().len(),
                reference.program.len()
            );
        }
    }
}
