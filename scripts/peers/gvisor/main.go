// gvisor-compile compiles an OCI seccomp profile of tests/data/peers with gVisor's seccomp
// compiler (gvisor.dev/gvisor/pkg/seccomp, what the gVisor Sentry installs its own filter
// with) and writes the raw program (little-endian struct sock_filter array).
//
// Only what those profiles use is read: the default action (SCMP_ACT_KILL or SCMP_ACT_ERRNO),
// SCMP_ACT_ALLOW entries, and SCMP_CMP_EQ conditions. Syscall numbers come from the build
// host's kernel headers (asm/unistd_64.h), as minijail's do, not from secopt.
//
// Usage: gvisor-compile PROFILE.json UNISTD_64_H OUT.bpf [-no-optimize]
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"gvisor.dev/gvisor/pkg/seccomp"
)

type profile struct {
	DefaultAction string `json:"defaultAction"`
	ErrnoRet      *uint16
	Syscalls      []struct {
		Names  []string `json:"names"`
		Action string   `json:"action"`
		Args   []struct {
			Index int    `json:"index"`
			Value uint64 `json:"value"`
			Op    string `json:"op"`
		} `json:"args"`
	} `json:"syscalls"`
}

func numbers(header string) (map[string]uintptr, error) {
	f, err := os.Open(header)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	nrs := make(map[string]uintptr)
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) == 3 && fields[0] == "#define" && strings.HasPrefix(fields[1], "__NR_") {
			n, err := strconv.ParseUint(fields[2], 10, 32)
			if err == nil {
				nrs[strings.TrimPrefix(fields[1], "__NR_")] = uintptr(n)
			}
		}
	}
	return nrs, s.Err()
}

func run() error {
	if len(os.Args) < 4 {
		return fmt.Errorf("usage: gvisor-compile PROFILE.json UNISTD_64_H OUT.bpf [-no-optimize]")
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		return err
	}
	var p profile
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	nrs, err := numbers(os.Args[2])
	if err != nil {
		return err
	}
	var def seccomp.Action
	switch p.DefaultAction {
	case "SCMP_ACT_KILL", "SCMP_ACT_KILL_THREAD":
		def = seccomp.KillThread
	case "SCMP_ACT_ERRNO":
		def = seccomp.ReturnError.Code(1)
	default:
		return fmt.Errorf("default action %s not handled", p.DefaultAction)
	}
	rules := seccomp.NewSyscallRules()
	for _, entry := range p.Syscalls {
		if entry.Action != "SCMP_ACT_ALLOW" {
			return fmt.Errorf("action %s not handled", entry.Action)
		}
		var rule seccomp.SyscallRule = seccomp.MatchAll{}
		if len(entry.Args) > 0 {
			var args seccomp.PerArg
			for i := range args {
				args[i] = seccomp.AnyValue{}
			}
			for _, a := range entry.Args {
				if a.Op != "SCMP_CMP_EQ" || a.Index > 5 {
					return fmt.Errorf("condition %+v not handled", a)
				}
				args[a.Index] = seccomp.EqualTo(a.Value)
			}
			rule = args
		}
		for _, name := range entry.Names {
			nr, ok := nrs[name]
			if !ok {
				return fmt.Errorf("%s: not in %s", name, os.Args[2])
			}
			rules = rules.Add(nr, rule)
		}
	}
	program := seccomp.Program{
		RuleSets: []seccomp.RuleSet{{Rules: rules, Action: seccomp.Allow}},
		Options: seccomp.ProgramOptions{
			DefaultAction:     def,
			BadArchAction:     seccomp.KillThread,
			SkipOptimizations: len(os.Args) > 4 && os.Args[4] == "-no-optimize",
		},
	}
	insns, stats, err := program.Build()
	if err != nil {
		return err
	}
	out := make([]byte, 0, 8*len(insns))
	for _, i := range insns {
		out = binary.LittleEndian.AppendUint16(out, i.OpCode)
		out = append(out, i.JumpIfTrue, i.JumpIfFalse)
		out = binary.LittleEndian.AppendUint32(out, i.K)
	}
	fmt.Fprintf(os.Stderr, "%s: %d instructions (%d before gVisor's optimizations)\n", os.Args[3], stats.SizeAfterOptimizations, stats.SizeBeforeOptimizations)
	return os.WriteFile(os.Args[3], out, 0o644)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gvisor-compile:", err)
		os.Exit(1)
	}
}
