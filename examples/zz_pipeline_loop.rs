use secopt::arch::Arch;
use secopt::compile::{compile_oci, CompileOptions};
use secopt::policy::ResolveOptions;
fn main() {
    let bytes = std::fs::read("../shared/profiles/oci/docker-default.json").unwrap();
    let resolve = ResolveOptions {
        native: Some(Arch::X86_64),
        arches: Some(vec![Arch::X86_64, Arch::X86, Arch::X32]),
        kernel: Some(secopt::policy::KernelVersion::new(6, 18)),
        ..Default::default()
    };
    let options = CompileOptions {
        optimize: Some(secopt::optimize::OptimizeOptions {
            verify: false,
            report: false,
            ..Default::default()
        }),
        ..Default::default()
    };
    let n: usize = std::env::args().nth(1).map_or(100, |a| a.parse().unwrap());
    let t = std::time::Instant::now();
    for _ in 0..n {
        std::hint::black_box(compile_oci(&bytes, "d", &resolve, &options).unwrap());
    }
    eprintln!("{:?} per compile", t.elapsed() / n as u32);
}
