//! Helpers shared by the end-to-end tests (`tests/e2e_*.rs` include this file with
//! `#[path]`): running the `secopt` binary, temporary directories, building the C probe, and
//! the skip-or-fail rule for tools a test needs.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `secopt` binary under test.
pub fn secopt() -> Command {
    Command::new(env!("CARGO_BIN_EXE_secopt"))
}

/// Runs `secopt` with `args` and returns its output.
pub fn run_secopt<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    secopt().args(args).output().expect("run secopt")
}

pub fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The shared profile corpus (`../shared/profiles` next to the checkout).
pub fn shared_profile(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/profiles")
        .join(rel)
}

/// A directory removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir =
            std::env::temp_dir().join(format!("secopt-{tag}-{}-{nanos:x}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether end-to-end prerequisites are mandatory (CI sets `SECOPT_REQUIRE_E2E=1`).
pub fn e2e_required() -> bool {
    std::env::var("SECOPT_REQUIRE_E2E").is_ok_and(|v| v == "1")
}

/// Finds `tool` on `PATH`.
pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// Checks the tools a test needs. Missing ones make the test skip loudly (printing why)
/// or, with `SECOPT_REQUIRE_E2E=1`, fail. Returns the paths when all are present.
pub fn require_tools(test: &str, tools: &[&str]) -> Option<Vec<PathBuf>> {
    let found: Vec<Option<PathBuf>> = tools.iter().map(|t| which(t)).collect();
    let missing: Vec<&str> = tools
        .iter()
        .zip(&found)
        .filter(|(_, f)| f.is_none())
        .map(|(t, _)| *t)
        .collect();
    if missing.is_empty() {
        return Some(found.into_iter().flatten().collect());
    }
    skip_or_fail(
        test,
        &format!(
            "not installed: {} (scripts/test.sh installs the packages)",
            missing.join(", ")
        ),
    );
    None
}

/// Reports that `test` cannot run here: a loud skip, or a failure under
/// `SECOPT_REQUIRE_E2E=1`.
pub fn skip_or_fail(test: &str, why: &str) {
    if e2e_required() {
        panic!("{test}: {why}, and SECOPT_REQUIRE_E2E=1 requires this test to run");
    }
    // Written to the stderr fd directly: the test harness captures `eprintln!` of passing
    // tests, and a skip must be seen.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "\n*** SKIPPED {test}: {why} ***\n*** set SECOPT_REQUIRE_E2E=1 to make this a failure ***"
    );
}

/// Whether we are root (runc and reading filters back need it).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Compiles `tests/data/syscall_probe.c` into `dir` with the system C compiler.
pub fn build_probe(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/syscall_probe.c");
    let out = dir.join("syscall_probe");
    let status = Command::new("cc")
        .arg("-O1")
        .arg("-Wall")
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .status()
        .expect("run cc (a C compiler is needed to build tests/data/syscall_probe.c)");
    assert!(status.success(), "cc failed on {}", src.display());
    out
}

/// One probe's result: the return value and errno (0 unless the return was -1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeResult {
    pub ret: i64,
    pub errno: i32,
}

impl ProbeResult {
    pub fn succeeded(self) -> bool {
        self.ret != -1
    }
    pub fn failed_with(self, errno: i32) -> bool {
        self.ret == -1 && self.errno == errno
    }
}

/// Parses the probe's "PROBE RET ERRNO" lines.
pub fn parse_probe(stdout: &str) -> BTreeMap<String, ProbeResult> {
    stdout
        .lines()
        .filter_map(|line| {
            let mut parts = line.rsplitn(3, ' ');
            let errno = parts.next()?.parse().ok()?;
            let ret = parts.next()?.parse().ok()?;
            let probe = parts.next()?.to_string();
            Some((probe, ProbeResult { ret, errno }))
        })
        .collect()
}

/// Runs `secopt compile PROFILE -o OUT extra...` through the binary (the CLI contract the
/// e2e tests rely on) and returns the raw filter bytes.
pub fn compile_with_cli(profile: &Path, out: &Path, extra: &[&str]) -> Vec<u8> {
    let mut cmd = secopt();
    cmd.arg("compile")
        .arg(profile)
        .arg("-o")
        .arg(out)
        .args(extra);
    let result = cmd.output().expect("run secopt compile");
    assert!(
        result.status.success(),
        "secopt compile {} {extra:?} failed ({:?}): {}",
        profile.display(),
        result.status.code(),
        stderr_of(&result)
    );
    std::fs::read(out).expect("read the compiled filter")
}

/// Encodes `(code, jt, jf, k)` instructions as raw little-endian `struct sock_filter`, by
/// hand (the layout of include/uapi/linux/filter.h).
pub fn raw_filter(insns: &[(u16, u8, u8, u32)]) -> Vec<u8> {
    let mut v = Vec::with_capacity(insns.len() * 8);
    for &(code, jt, jf, k) in insns {
        v.extend_from_slice(&code.to_le_bytes());
        v.push(jt);
        v.push(jf);
        v.extend_from_slice(&k.to_le_bytes());
    }
    v
}

/// A child process killed (and reaped) when the test ends, even by a failed assertion.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A shell that starts `cat` over and over: a fork and an execve every round, so tasks come
/// and go while a tracer is attached.
pub fn forking_shell() -> KillOnDrop {
    KillOnDrop(
        Command::new("sh")
            .args(["-c", "while :; do cat /proc/self/stat > /dev/null; done"])
            .spawn()
            .expect("start sh"),
    )
}

/// A field of `/proc/PID/status` (`"TracerPid:"`, `"State:"`), trimmed; `None` once the
/// process is gone.
pub fn proc_status_field(pid: u32, field: &str) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(field).map(|v| v.trim().to_string()))
}
