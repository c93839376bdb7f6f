//! The worst-case path (`cost::worst_case_path`, one pass that splits the values of `nr` and
//! `arch` at each test) against two oracles that do not share its exploration of ranges:
//!
//! - **one run per range**: the program run once (with `cost::path_lengths`, both words known)
//!   for each range of `arch` and then of `nr` values on which every comparison of that word
//!   with a constant goes the same way. Every input of a range runs the same instructions up to
//!   its argument tests, so the longest of these runs is the worst path; on filters whose
//!   comparisons of `nr` and `arch` are with constants (every compiler's) the two must agree
//!   exactly. It is how the figure was computed before the single pass, and it is slow: one
//!   run per range, hundreds to thousands of runs.
//! - **the interpreter**: no concrete input runs more instructions than the worst path.
//!
//! The programs are ones nobody here wrote: the system libseccomp's (linear and tree, every
//! OCI profile of the corpus), Kafel's, minijail's and gVisor's (`tests/data/peers/`),
//! Firecracker's own files (`tests/data/firecracker/`), and secopt's optimization of the
//! libseccomp ones; plus random valid programs, where the single pass may only be longer (it
//! follows both sides of a test of `nr` after arithmetic, where one run per range follows its
//! representative value).

mod common;

use common::libseccomp_profiles::{build_filter, load_profile, oci_profile_names, ProfileOptions};
use common::ranges::worst_by_ranges;
use secopt::bpf::testing::{random_data, random_program, GenConfig, Rng};
use secopt::bpf::thread_filters::decode;
use secopt::bpf::{interp, Program, SeccompData};
use secopt::optimize::cost::worst_case_path;
use secopt::optimize::{optimize, OptimizeOptions};
use std::path::Path;

/// The most instructions a concrete run takes over `nr` 0..600 (and x32's), a few tokens and
/// random arguments.
fn longest_run(prog: &Program, rng: &mut Rng) -> usize {
    let tokens = [0xc000_003e, 0x4000_0003, 0xc000_00b7, 0, u32::MAX];
    let mut longest = 0;
    for token in tokens {
        for nr in (0..600u32).chain(0x4000_0000..0x4000_0200) {
            for zero_args in [true, false] {
                let mut d = if zero_args {
                    SeccompData::new(token, nr as i32, [0; 6])
                } else {
                    random_data(rng, prog, &[token])
                };
                d.arch = token;
                d.nr = nr as i32;
                longest = longest.max(interp::trace(prog, &d).unwrap().steps);
            }
        }
    }
    longest
}

/// Asserts both oracles on `prog`; returns its worst path.
fn check(label: &str, prog: &Program, rng: &mut Rng) -> u32 {
    let worst = worst_case_path(prog);
    assert_eq!(
        worst,
        worst_by_ranges(prog),
        "{label}: the single pass and one run per range disagree"
    );
    let run = longest_run(prog, rng);
    assert!(
        run <= worst as usize,
        "{label}: an input runs {run} instructions, the worst path is {worst}"
    );
    worst
}

#[test]
fn the_worst_path_of_every_corpus_filter_is_the_longest_run_per_range() {
    let mut rng = Rng::new(0x3057);
    let mut checked = 0;
    for name in &oci_profile_names() {
        let profile = load_profile(&format!("oci/{name}")).unwrap();
        for optimize_level in [1, 2] {
            let opts = ProfileOptions {
                optimize: optimize_level,
                ..ProfileOptions::default()
            };
            let input = build_filter(&profile, &opts)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .program;
            let label = format!("{name} (libseccomp optimize={optimize_level})");
            check(&label, &input, &mut rng);
            let out = optimize(&input, &OptimizeOptions::default()).unwrap();
            check(&format!("{label}, optimized"), &out.program, &mut rng);
            checked += 2;
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for entry in std::fs::read_dir(root.join("peers")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "bpf") {
            let prog = Program::from_raw(&std::fs::read(&path).unwrap()).unwrap();
            check(&path.display().to_string(), &prog, &mut rng);
            checked += 1;
        }
    }
    for entry in std::fs::read_dir(root.join("firecracker")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "bincode") {
            let filters = decode(&std::fs::read(&path).unwrap()).unwrap();
            for thread in filters.names() {
                let prog = filters.program(thread).unwrap();
                check(&format!("{} {thread}", path.display()), prog, &mut rng);
                checked += 1;
            }
        }
    }
    assert!(checked >= 60, "only {checked} programs");
}

#[test]
fn the_worst_path_of_random_programs_bounds_every_run() {
    let mut rng = Rng::new(0x3058);
    let (mut equal, mut longer) = (0, 0);
    for round in 0..300 {
        let cfg = if round % 2 == 0 {
            GenConfig::default()
        } else {
            GenConfig::cache_friendly()
        };
        let prog = random_program(&mut rng, &cfg);
        let worst = worst_case_path(&prog);
        let by_ranges = worst_by_ranges(&prog);
        assert!(
            worst >= by_ranges,
            "round {round}: the single pass ({worst}) is shorter than a run per range \
             ({by_ranges}): {prog:?}"
        );
        let run = longest_run(&prog, &mut rng);
        assert!(run <= worst as usize, "round {round}: {run} > {worst}");
        if worst == by_ranges {
            equal += 1;
        } else {
            longer += 1;
        }
    }
    // Arithmetic on `nr` before a test is rare in the generator: most agree exactly.
    assert!(equal > 250, "{equal} equal, {longer} longer");
    // Longer programs, where states pile up past the cap on one instruction and are merged:
    // still a bound on every run.
    for round in 0..40 {
        let cfg = GenConfig {
            max_len: 600,
            ..GenConfig::default()
        };
        let prog = random_program(&mut rng, &cfg);
        let worst = worst_case_path(&prog);
        let run = longest_run(&prog, &mut rng);
        assert!(run <= worst as usize, "long round {round}: {run} > {worst}");
    }
}
