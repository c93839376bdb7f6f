//! `secopt verify`/`diff` take profiles as well as filters: a profile is compiled on the fly
//! exactly as `secopt compile` compiles it.

use std::process::Command;

fn secopt(args: &[&str]) -> (i32, String) {
    let (code, stdout, _) = secopt_with_stderr(args);
    (code, stdout)
}

/// The exit code, stdout and stderr of `secopt ARGS`.
fn secopt_with_stderr(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_secopt"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_profile_verifies_equal_to_its_compiled_filter_and_different_from_an_edit() {
    let dir = std::env::temp_dir().join(format!("secopt-verify-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web-server.json");
    let compiled = dir.join("ws.bpf");
    let (code, _) = secopt(&["compile", profile, "-o", compiled.to_str().unwrap()]);
    assert_eq!(code, 0);
    let (code, out) = secopt(&["verify", profile, compiled.to_str().unwrap()]);
    assert_eq!((code, out.starts_with("equal")), (0, true), "{out}");

    // The same profile without `getpid` in its allow-list.
    let mut edited: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(profile).unwrap()).unwrap();
    let names = edited["syscalls"][0]["names"].as_array_mut().unwrap();
    names.retain(|n| n != "getpid");
    let edited_path = dir.join("ws2.json");
    std::fs::write(&edited_path, edited.to_string()).unwrap();
    let (code, out) = secopt(&["diff", profile, edited_path.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("x86_64 getpid: ALLOW -> ERRNO(1)"), "{out}");
    let (code, out) = secopt(&[
        "verify",
        compiled.to_str().unwrap(),
        edited_path.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("(getpid)"), "{out}");
}

/// `--profile-arch` compiles a profile input for that architecture, whatever the host: a
/// filter compiled for aarch64 is equal to the profile compiled so, on every input, and
/// unlike the profile compiled for another host.
#[test]
fn a_profile_is_compiled_for_the_arch_verify_is_given() {
    let dir = std::env::temp_dir().join(format!("secopt-verify-arch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web-server.json");
    let compiled = dir.join("ws-aarch64.bpf");
    let compiled = compiled.to_str().unwrap();
    let (code, _) = secopt(&["compile", profile, "--arch", "aarch64", "-o", compiled]);
    assert_eq!(code, 0);
    let (code, out) = secopt(&["verify", profile, compiled, "--profile-arch", "aarch64"]);
    assert_eq!((code, out.starts_with("equal")), (0, true), "{out}");
    assert!(out.contains("every arch token"), "the whole domain: {out}");
    if secopt::arch::Arch::host() != Some(secopt::arch::Arch::Aarch64) {
        let (code, out) = secopt(&["verify", profile, compiled]);
        assert_eq!(code, 1, "{out}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A big-endian machine's filter needs `--input-format raw-be`; the profile beside it is still
/// read as a profile (the format describes filters), and both bytes orders of the same program
/// are the same filter to `verify`.
#[test]
fn a_big_endian_filter_is_verified_against_its_profile() {
    let dir = std::env::temp_dir().join(format!("secopt-verify-be-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web-server.json");
    let compiled = dir.join("ws-s390x.bpf");
    let compiled = compiled.to_str().unwrap();
    let (code, _) = secopt(&["compile", profile, "--arch", "s390x", "-o", compiled]);
    assert_eq!(code, 0);
    let bytes = std::fs::read(compiled).unwrap();
    // struct sock_filter's u16 code, big-endian: s390x's filter starts `ld [arch]` (0x0020).
    assert_eq!(&bytes[..2], &[0x00, 0x20]);
    let be = ["--input-format", "raw-be", "--profile-arch", "s390x"];
    for (a, b) in [(compiled, profile), (profile, compiled)] {
        let mut args = vec!["verify", a, b];
        args.extend(be);
        let (code, out) = secopt(&args);
        assert_eq!(
            (code, out.starts_with("equal")),
            (0, true),
            "{args:?}: {out}"
        );
    }
    // Without the flag the filter is not read (the error says to pass it): exit 2.
    let (code, _) = secopt(&["verify", compiled, profile, "--profile-arch", "s390x"]);
    assert_eq!(code, 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A profile compiled with other settings than the defaults is verified with the same flags
/// `compile` took: Docker's profile for a container with every capability allows what the
/// default capabilities do not (`includes.caps`), so the two filters differ, and `--caps all`
/// on the profile side makes them equal again.
#[test]
fn a_profile_is_compiled_with_the_settings_verify_is_given() {
    let dir = std::env::temp_dir().join(format!("secopt-verify-caps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let profile = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/profiles/oci/docker-default.json"
    );
    let compiled = dir.join("docker-all-caps.bpf");
    let compiled = compiled.to_str().unwrap();
    let (code, _) = secopt(&[
        "compile", profile, "--caps", "all", "--kernel", "6.18", "-o", compiled,
    ]);
    assert_eq!(code, 0);
    let (code, out) = secopt(&["verify", compiled, profile, "--kernel", "6.18"]);
    assert_eq!(code, 1, "default caps: {out}");
    let (code, out) = secopt(&[
        "verify", compiled, profile, "--kernel", "6.18", "--caps", "all",
    ]);
    assert_eq!((code, out.starts_with("equal")), (0, true), "{out}");
    // --runc-compat: the stub is part of what is compared.
    let stubbed = dir.join("docker-runc.bpf");
    let stubbed = stubbed.to_str().unwrap();
    let (code, _) = secopt(&[
        "compile",
        profile,
        "--runc-compat",
        "--kernel",
        "6.18",
        "-o",
        stubbed,
    ]);
    assert_eq!(code, 0);
    let (code, _) = secopt(&["verify", stubbed, profile, "--kernel", "6.18"]);
    assert_eq!(code, 1);
    let (code, out) = secopt(&[
        "verify",
        stubbed,
        profile,
        "--kernel",
        "6.18",
        "--runc-compat",
    ]);
    assert_eq!((code, out.starts_with("equal")), (0, true), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A listing or JSON document `compile` wrote records the settings it was compiled with;
/// verifying it against its profile with other flags says which flag differs, because the
/// verdict is then about the flag and not the filter: Docker's profile compiled with every
/// capability allows `clone` with namespace flags, which the default capabilities do not
/// (`includes.caps: CAP_SYS_ADMIN`), so the verdict is *different*, with `--caps all` named;
/// with the flag passed the warning is gone and the verdict is *equal*. A raw filter records
/// nothing and gets no warning.
#[test]
fn verify_names_the_flag_a_filter_was_compiled_with() {
    let dir = std::env::temp_dir().join(format!("secopt-verify-recorded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let profile = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/profiles/oci/docker-default.json"
    );
    let run = secopt_with_stderr;
    let hint = "was compiled with caps `all`";
    for output in ["all.s", "all.json", "all.bpf"] {
        let compiled = dir.join(output);
        let compiled = compiled.to_str().unwrap();
        let (code, _, err) = run(&["compile", profile, "--caps", "all", "-o", compiled]);
        assert_eq!(code, 0, "{err}");
        let (code, out, err) = run(&["verify", profile, compiled]);
        assert_eq!(code, 1, "{out}");
        assert!(out.contains("(clone)"), "{out}");
        let recorded = !output.ends_with(".bpf");
        assert_eq!(err.contains(hint), recorded, "{output}: {err}");
        assert_eq!(err.contains("pass --caps all"), recorded, "{output}: {err}");
        let (code, out, err) = run(&["verify", profile, compiled, "--caps", "all"]);
        assert_eq!((code, out.starts_with("equal")), (0, true), "{out}");
        assert!(!err.contains("records that"), "{output}: {err}");
    }
    // The JSON report lists it among the warnings, with the setting's two values.
    let compiled = dir.join("all.s");
    let (_, out, _) = run(&[
        "verify",
        profile,
        compiled.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let differ: Vec<&serde_json::Value> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "settings_differ")
        .collect();
    assert_eq!(differ.len(), 1, "{report}");
    assert_eq!(
        (
            &differ[0]["setting"],
            &differ[0]["recorded"],
            &differ[0]["used"],
            &differ[0]["flag"]
        ),
        (
            &"caps".into(),
            &"all".into(),
            &"default".into(),
            &"--caps all".into()
        )
    );
    // A setting that does not matter to the profile is not said: the example web server's
    // profile has no `includes`, so every capability set compiles it the same (equal).
    let web = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/web-server.json");
    let compiled = dir.join("web-all.s");
    let compiled = compiled.to_str().unwrap();
    let (code, _, err) = run(&["compile", web, "--caps", "all", "-o", compiled]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&["verify", web, compiled]);
    assert_eq!((code, out.starts_with("equal")), (0, true), "{out}");
    assert!(!err.contains("records that"), "{err}");
    // The native arch is what `includes.arches` is matched against: Docker's profile allows
    // arch_prctl only on amd64 and x32 hosts, so compiled with x86 first it refuses x86_64's
    // arch_prctl, which verify finds, and the warning names the native arch.
    let compiled = dir.join("native-x86.s");
    let compiled = compiled.to_str().unwrap();
    let (code, _, err) = run(&[
        "compile", profile, "--arch", "x86", "--arch", "x86_64", "--arch", "x32", "-o", compiled,
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&["verify", profile, compiled]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("(arch_prctl)"), "{out}");
    assert!(
        err.contains("was compiled with native arch x86, and"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A Firecracker thread's listing records whose semantics it has: compiled with the rust-vmm
/// dialect (no x32 special case), it differs from the file compiled with libseccomp's (x32's
/// `read` is decided otherwise), and the warning names `--firecracker-dialect rust-vmm`,
/// with which the two are equal.
#[test]
fn verify_names_the_dialect_a_firecracker_filter_was_compiled_with() {
    let dir = std::env::temp_dir().join(format!("secopt-verify-dialect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/profiles/firecracker/firecracker-x86_64-unknown-linux-musl.json"
    );
    let thread = format!("{file}:vcpu");
    let listing = dir.join("vcpu-rust-vmm.s");
    let listing = listing.to_str().unwrap();
    let (code, _, err) = secopt_with_stderr(&[
        "compile",
        file,
        "--thread",
        "vcpu",
        "--firecracker-dialect",
        "rust-vmm",
        "-o",
        listing,
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) =
        secopt_with_stderr(&["verify", &thread, listing, "--profile-arch", "x86_64"]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("pass --firecracker-dialect rust-vmm"), "{err}");
    let (code, out, err) = secopt_with_stderr(&[
        "verify",
        &thread,
        listing,
        "--profile-arch",
        "x86_64",
        "--firecracker-dialect",
        "rust-vmm",
    ]);
    assert_eq!((code, out.starts_with("equal")), (0, true), "{out}");
    assert!(!err.contains("records that"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A profile whose plain lowering is over the kernel's 4096 instructions (1 500 `ioctl`
/// requests, one rule each: about three instructions a value) while its optimized filter
/// fits: `compile --no-optimize` refuses it, `compile` writes the optimized filter, and
/// `verify` still compares that filter with the profile's meaning, finding it equal and
/// finding an edit of one request.
#[test]
fn a_profile_over_the_kernel_limit_is_verified_by_its_meaning() {
    let dir = std::env::temp_dir().join(format!("secopt-verify-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Distinct requests spread over the 32-bit range (no runs, no masks to share).
    let requests: Vec<u64> = (0..1500u64)
        .map(|i| (i * 2_654_435_761) % (1 << 32))
        .collect();
    let rules: Vec<serde_json::Value> = requests
        .iter()
        .map(|v| {
            serde_json::json!({"names": ["ioctl"], "action": "SCMP_ACT_ALLOW",
                "args": [{"index": 1, "value": v, "op": "SCMP_CMP_EQ"}]})
        })
        .collect();
    let profile = serde_json::json!({
        "defaultAction": "SCMP_ACT_ERRNO",
        "architectures": ["SCMP_ARCH_X86_64"],
        "syscalls": rules,
    });
    let profile_path = dir.join("ioctls.json");
    std::fs::write(&profile_path, profile.to_string()).unwrap();
    let profile_path = profile_path.to_str().unwrap();
    let arch = ["--arch", "x86_64"];

    let plain = dir.join("plain.bpf");
    let (code, _) = secopt(
        &[
            &["compile", profile_path, "--no-optimize", "-o"][..],
            &[plain.to_str().unwrap()],
            &arch,
        ]
        .concat(),
    );
    assert_eq!(code, 2, "the plain lowering is over the limit");
    assert!(!plain.exists());

    let compiled = dir.join("ioctls.bpf");
    let compiled_path = compiled.to_str().unwrap();
    let (code, _) = secopt(&[&["compile", profile_path, "-o", compiled_path][..], &arch].concat());
    assert_eq!(code, 0);
    let mut bytes = std::fs::read(&compiled).unwrap();
    assert!(bytes.len() / 8 <= 4096);

    let verify = |filter: &str| {
        secopt(&[
            "verify",
            profile_path,
            filter,
            "--profile-arch",
            "x86_64",
            "--format",
            "json",
        ])
    };
    let (code, out) = verify(compiled_path);
    assert_eq!(code, 0, "{out}");

    // One request's `jeq` tests another value: calls with that request are refused.
    let jeq = 0x15u16; // BPF_JMP | BPF_JEQ | BPF_K
    let at = bytes
        .chunks_exact(8)
        .position(|i| {
            u16::from_le_bytes([i[0], i[1]]) == jeq
                && requests.contains(&u64::from(u32::from_le_bytes([i[4], i[5], i[6], i[7]])))
        })
        .expect("a jeq of a request");
    let k = u32::from_le_bytes(bytes[at * 8 + 4..at * 8 + 8].try_into().unwrap());
    let other = (0..)
        .map(|d| k ^ (1 << d))
        .find(|v| !requests.contains(&u64::from(*v)))
        .unwrap();
    bytes[at * 8 + 4..at * 8 + 8].copy_from_slice(&other.to_le_bytes());
    let edited = dir.join("edited.bpf");
    std::fs::write(&edited, &bytes).unwrap();
    let (code, out) = verify(edited.to_str().unwrap());
    assert_eq!(code, 1, "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let example = &report["counterexample"];
    assert_eq!(example["seccomp_data"]["syscall"], "ioctl", "{out}");
    let request = example["seccomp_data"]["args"][1].as_u64().unwrap();
    // The profile's meaning, worked out here: ALLOW exactly for the listed requests.
    let expected = if requests.contains(&request) {
        "ALLOW"
    } else {
        "ERRNO(1)"
    };
    assert_eq!(example["a"]["action"], expected, "{out}");
    assert!(
        request == u64::from(k) || request == u64::from(other),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What `compile` warns about a profile, `verify` and `diff` say too (on stderr): a misspelt
/// field leaves a rule unconditional and a misspelt name is skipped, and the verdict is about
/// the profile so read. Other arches' names (`newfstatat` on x86) are expected, not warned.
/// Their JSON lists the warnings `compile --emit json` lists, once per side, with the input.
#[test]
fn verify_and_diff_warn_about_the_profile_as_compile_does() {
    let dir = std::env::temp_dir().join(format!("secopt-verify-warn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let profile = dir.join("typos.json");
    std::fs::write(
        &profile,
        r#"{"defaultAction": "SCMP_ACT_ERRNO",
            "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86"],
            "syscalls": [{"names": ["read", "mkdri", "newfstatat", "uretprobe"], "action": "SCMP_ACT_ALLOW"},
                         {"names": ["socket"], "action": "SCMP_ACT_ALLOW",
                          "argz": [{"index": 0, "value": 2, "op": "SCMP_CMP_EQ"}]}]}"#,
    )
    .unwrap();
    let profile = profile.to_str().unwrap();
    for verb in ["verify", "diff"] {
        let out = Command::new(env!("CARGO_BIN_EXE_secopt"))
            .args([verb, profile, profile])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{verb}: {stderr}");
        for said in [
            r#"$.syscalls[1].argz: unknown field "argz" ignored"#,
            "$.syscalls[0]: `mkdri` is no syscall of any architecture secopt knows, skipped as \
             runc skips it: a typo for `mkdir`?",
            // What explains a difference from the filter runc installed (its libseccomp
            // 2.5.4 skips uretprobe's rule).
            "runc skips the names its libseccomp does not know, and libseccomp up to 2.5.5 \
             (Debian 12 ships 2.5.4) does not know uretprobe",
        ] {
            // Once per side.
            assert_eq!(stderr.matches(said).count(), 2, "{verb}: {stderr}");
        }
        assert!(!stderr.contains("newfstatat"), "{verb}: {stderr}");
    }
    let compiled = Command::new(env!("CARGO_BIN_EXE_secopt"))
        .args(["compile", profile, "--emit", "json", "--no-verify"])
        .output()
        .unwrap();
    let compiled: serde_json::Value = serde_json::from_slice(&compiled.stdout).unwrap();
    let compiled = compiled["warnings"].as_array().unwrap();
    let kinds: Vec<(&str, &str)> = compiled
        .iter()
        .map(|w| (w["path"].as_str().unwrap(), w["kind"].as_str().unwrap()))
        .collect();
    for expected in [
        ("$.syscalls[1].argz", "ignored"),
        ("$.syscalls[0]", "unknown_name"),
        ("$", "not_enforced"),
    ] {
        assert!(kinds.contains(&expected), "{expected:?} in {kinds:?}");
    }
    for verb in ["verify", "diff"] {
        let (code, stdout) = secopt(&[verb, profile, profile, "--format", "json"]);
        assert_eq!(code, 0, "{verb}: {stdout}");
        let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let mut listed = report["warnings"].as_array().unwrap().clone();
        for w in &mut listed {
            assert_eq!(w["input"], profile, "{verb}: {w}");
            w.as_object_mut().unwrap().remove("input");
        }
        let twice: Vec<serde_json::Value> = compiled.iter().chain(compiled).cloned().collect();
        assert_eq!(listed, twice, "{verb}");
    }
}

/// A Firecracker file's warnings are said by `verify` and `diff` too, as `compile` says them,
/// for the threads compared: `FILE:THREAD` says that thread's alone.
#[test]
fn verify_and_diff_warn_about_a_firecracker_file_as_compile_does() {
    let dir = std::env::temp_dir().join(format!("secopt-verify-fc-warn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("fc.json");
    // Firecracker's compiler since 1.11 (libseccomp-based, the default dialect) ignores a
    // field it does not know; 1.10's and rust-vmm's refuse it.
    std::fs::write(
        &file,
        r#"{"vmm": {"default_action": "trap", "filter_action": "allow", "comment": 1,
                    "filter": [{"syscall": "read", "argz": []}]},
            "api": {"default_action": "trap", "filter_action": "allow",
                    "filter": [{"syscall": "write", "note": "x"}]}}"#,
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let vmm_warnings = [
        r#"(thread vmm): $.vmm.comment: unknown field "comment" ignored"#,
        r#"(thread vmm): $.vmm.filter[0].argz: unknown field "argz" ignored"#,
    ];
    let api_warning = r#"(thread api): $.api.filter[0].note: unknown field "note" ignored"#;
    for verb in ["verify", "diff"] {
        let run = |a: &str, b: &str| {
            let out = Command::new(env!("CARGO_BIN_EXE_secopt"))
                .args([verb, "--profile-arch", "x86_64", a, b])
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert_eq!(out.status.code(), Some(0), "{verb}: {stderr}");
            stderr
        };
        let whole = run(file, file);
        for said in vmm_warnings.iter().chain([&api_warning]) {
            // Once per side.
            assert_eq!(whole.matches(said).count(), 2, "{verb}: {whole}");
        }
        let vmm = run(&format!("{file}:vmm"), &format!("{file}:vmm"));
        for said in vmm_warnings {
            assert_eq!(vmm.matches(said).count(), 2, "{verb}: {vmm}");
        }
        assert!(!vmm.contains("thread api"), "{verb}: {vmm}");
        // The JSON report lists them with the thread's input (`FILE:THREAD`), once per side.
        let listed = |a: &str, b: &str| {
            let (code, stdout) =
                secopt(&[verb, "--profile-arch", "x86_64", a, b, "--format", "json"]);
            assert_eq!(code, 0, "{verb}: {stdout}");
            let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            let mut found: Vec<(String, String, String)> = report["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| {
                    assert_eq!(w["kind"], "ignored", "{verb}: {w}");
                    let text = |k: &str| w[k].as_str().unwrap().to_string();
                    (text("input"), text("path"), text("message"))
                })
                .collect();
            found.sort();
            found
        };
        let expected = |threads: &[&str]| {
            let mut all = Vec::new();
            for (thread, path, field) in [
                ("api", "$.api.filter[0].note", "note"),
                ("vmm", "$.vmm.comment", "comment"),
                ("vmm", "$.vmm.filter[0].argz", "argz"),
            ] {
                if threads.contains(&thread) {
                    let entry = (
                        format!("{file}:{thread}"),
                        path.to_string(),
                        format!("unknown field \"{field}\" ignored"),
                    );
                    all.push(entry.clone());
                    all.push(entry);
                }
            }
            all.sort();
            all
        };
        assert_eq!(listed(file, file), expected(&["api", "vmm"]), "{verb}");
        let vmm = format!("{file}:vmm");
        assert_eq!(listed(&vmm, &vmm), expected(&["vmm"]), "{verb}");
    }
}

/// Options that compile a profile input are refused when no input is such a profile (they
/// would change nothing), naming each; with a profile on one side they are taken.
#[test]
fn profile_options_without_a_profile_input_are_refused() {
    let dir = std::env::temp_dir().join(format!("secopt-verify-unused-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let filter = dir.join("allow.s");
    std::fs::write(&filter, "ret ALLOW\n").unwrap();
    let profile = dir.join("allow.json");
    std::fs::write(&profile, r#"{"defaultAction": "SCMP_ACT_ALLOW"}"#).unwrap();
    let (f, p) = (filter.to_str().unwrap(), profile.to_str().unwrap());
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_secopt"))
            .args(args)
            .output()
            .unwrap()
    };
    for verb in ["verify", "diff"] {
        for (flags, named) in [
            (
                &["--runc-compat"][..],
                "--runc-compat only affects a profile input",
            ),
            (
                &["--caps", "all", "--kernel", "5.4"][..],
                "--caps, --kernel only affect a profile input",
            ),
            (
                &["--firecracker-dialect", "rust-vmm"][..],
                "--firecracker-dialect",
            ),
            (&["--profile-arch", "aarch64"][..], "--profile-arch"),
        ] {
            let mut args = vec![verb, f, f];
            args.extend_from_slice(flags);
            let out = run(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{verb} {flags:?}: {stderr}");
            assert!(stderr.contains(named), "{verb} {flags:?}: {stderr}");
        }
        // With the profile on one side, the OCI options are not refused (the profile's filter
        // kills other arches' calls where `ret ALLOW` does not: a difference, exit 1).
        let out = run(&[verb, f, p, "--caps", "all", "--kernel", "5.4"]);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{verb}: {out:?}");
        // The Firecracker dialect still means nothing for an OCI profile.
        let out = run(&[verb, f, p, "--firecracker-dialect", "rust-vmm"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(2) && stderr.contains("no input is a Firecracker JSON file"),
            "{verb}: {stderr}"
        );
    }
}
