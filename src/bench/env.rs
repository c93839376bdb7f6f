//! The environment that shapes seccomp timings, read from `/proc` and `/sys`: kernel
//! version (allow cache or not), BPF JIT, CPU, speculative-execution mitigations (syscall
//! entry cost), hypervisor, clock source, machine load, and whether the benchmark itself
//! already runs under a seccomp filter (then "no filter" is not none).

use serde::Serialize;
use std::path::Path;

/// What was found; fields are `None` where the information is not available.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Environment {
    /// `uname -r`.
    pub kernel: Option<String>,
    /// Whether the kernel has the seccomp allow cache (5.11+).
    pub allow_cache: Option<bool>,
    /// `net.core.bpf_jit_enable` (0 off, 1 on, 2 on with debug output).
    pub bpf_jit_enable: Option<String>,
    /// `net.core.bpf_jit_harden` (constant blinding makes JITed filters slower).
    pub bpf_jit_harden: Option<String>,
    pub cpu_model: Option<String>,
    pub cpus_online: Option<usize>,
    /// `(vulnerability, status)` from `/sys/devices/system/cpu/vulnerabilities`.
    pub mitigations: Vec<(String, String)>,
    /// `mitigations=` and similar switches on the kernel command line.
    pub mitigation_switches: Vec<String>,
    /// Whether the CPU reports the `hypervisor` flag.
    pub hypervisor_flag: Option<bool>,
    /// What the hypervisor is, if the system says (`/sys/hypervisor/type`, DMI product
    /// name, `systemd-detect-virt`).
    pub hypervisor: Option<String>,
    /// The container runtime the benchmark runs in, if `systemd-detect-virt` says.
    pub container: Option<String>,
    /// `/sys/devices/system/clocksource/clocksource0/current_clocksource`.
    pub clocksource: Option<String>,
    /// `/proc/loadavg` 1-minute load when the run started and ended.
    pub load_start: Option<f64>,
    pub load_end: Option<f64>,
    /// The benchmark process's own seccomp mode and filter count (`/proc/self/status`).
    pub own_seccomp: Option<String>,
    /// Measured TSC frequency in GHz (x86_64).
    pub tsc_ghz: Option<f64>,
    /// The CPU the benchmark children were pinned to.
    pub pinned_cpu: Option<usize>,
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The 1-minute load average.
pub fn load_average() -> Option<f64> {
    read("/proc/loadavg")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn cpuinfo_field(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

/// `systemd-detect-virt` with `flag` (`--vm` or `--container`), when installed.
fn detect_virt(flag: &str) -> Option<String> {
    let out = std::process::Command::new("systemd-detect-virt")
        .arg(flag)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!s.is_empty() && s != "none").then_some(s)
}

impl Environment {
    /// Reads everything that does not need a measurement.
    pub fn probe() -> Environment {
        let kernel = read("/proc/sys/kernel/osrelease");
        let allow_cache = kernel
            .as_deref()
            .and_then(|k| k.parse::<crate::bpf::cache::KernelVersion>().ok())
            .map(|v| v.has_allow_cache());
        let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
        let mut mitigations: Vec<(String, String)> =
            std::fs::read_dir("/sys/devices/system/cpu/vulnerabilities")
                .map(|dir| {
                    dir.filter_map(Result::ok)
                        .filter_map(|e| {
                            let name = e.file_name().to_string_lossy().into_owned();
                            read(e.path()).map(|v| (name, v))
                        })
                        .collect()
                })
                .unwrap_or_default();
        mitigations.sort();
        let mitigation_switches = read("/proc/cmdline")
            .map(|c| {
                c.split_whitespace()
                    .filter(|t| {
                        let key = t.split('=').next().unwrap_or(t);
                        matches!(
                            key,
                            "mitigations"
                                | "nospectre_v1"
                                | "nospectre_v2"
                                | "spectre_v2"
                                | "pti"
                                | "nopti"
                                | "retbleed"
                                | "spec_store_bypass_disable"
                                | "mds"
                                | "tsx_async_abort"
                                | "l1tf"
                        )
                    })
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let flags = cpuinfo_field(&cpuinfo, "flags");
        let hypervisor = read("/sys/hypervisor/type")
            .or_else(|| detect_virt("--vm"))
            .or_else(|| read("/sys/class/dmi/id/product_name"));
        let own_seccomp = read("/proc/self/status").and_then(|s| {
            let field = |k: &str| {
                s.lines()
                    .find_map(|l| l.strip_prefix(k).map(|v| v.trim().to_string()))
            };
            let mode = field("Seccomp:")?;
            let filters = field("Seccomp_filters:").unwrap_or_else(|| "?".into());
            Some(format!("mode {mode}, {filters} filters"))
        });
        Environment {
            kernel,
            allow_cache,
            bpf_jit_enable: read("/proc/sys/net/core/bpf_jit_enable"),
            bpf_jit_harden: read("/proc/sys/net/core/bpf_jit_harden"),
            cpu_model: cpuinfo_field(&cpuinfo, "model name"),
            cpus_online: std::thread::available_parallelism().ok().map(|n| n.get()),
            mitigations,
            mitigation_switches,
            hypervisor_flag: flags.map(|f| f.split_whitespace().any(|x| x == "hypervisor")),
            hypervisor,
            container: detect_virt("--container"),
            clocksource: read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
            load_start: load_average(),
            load_end: None,
            own_seccomp,
            tsc_ghz: None,
            pinned_cpu: None,
        }
    }

    /// Whether the benchmark process itself is filtered (then "none" still pays for a
    /// filter, and every overhead is relative to that).
    pub fn already_filtered(&self) -> bool {
        self.own_seccomp
            .as_deref()
            .is_some_and(|s| !s.starts_with("mode 0"))
    }

    /// The mitigations that are active, shortened for a header line.
    pub fn mitigation_summary(&self) -> String {
        let active: Vec<String> = self
            .mitigations
            .iter()
            .filter(|(_, v)| v.starts_with("Mitigation") || v.starts_with("Vulnerable"))
            .map(|(k, v)| {
                let short = v.split(';').next().unwrap_or(v);
                format!("{k}: {short}")
            })
            .collect();
        if active.is_empty() {
            "none active (all 'Not affected')".into()
        } else {
            active.join("; ")
        }
    }
}
