// gvisor-compile compiles a seccomp policy with gVisor's seccomp compiler
// (gvisor.dev/gvisor/pkg/seccomp, what the gVisor Sentry installs its own filter with) and
// writes the raw program (little-endian struct sock_filter array). The policy is either an OCI
// profile of tests/data/peers or one thread of a Firecracker seccompiler file.
//
// Only what those files use is read. OCI: the default action (SCMP_ACT_KILL or
// SCMP_ACT_ERRNO with its defaultErrnoRet), SCMP_ACT_ALLOW and SCMP_ACT_ERRNO entries, and
// conditions with every SCMP_CMP operator, compared on 64 bits. Firecracker: the
// meaning Firecracker's own compiler (libseccomp-based, since 1.11) gives the file: a "dword"
// "eq" compares the low 32 bits, every other condition all 64; the entries of one syscall
// are ORed, the conditions of one entry ANDed; the bad-architecture action is libseccomp's
// default, kill the thread. Syscall numbers come from the build host's kernel headers
// (asm/unistd_64.h), as minijail's do, not from secopt.
//
// Usage: gvisor-compile [-no-optimize] [-firecracker THREAD] [-hot NAME,...] POLICY.json UNISTD_64_H OUT.bpf
//
// -hot lists gVisor's HotSyscalls, most frequent first: the syscalls with conditions it
// tests before the others.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"gvisor.dev/gvisor/pkg/seccomp"
)

type profile struct {
	DefaultAction   string  `json:"defaultAction"`
	DefaultErrnoRet *uint16 `json:"defaultErrnoRet"`
	Syscalls        []struct {
		Names    []string `json:"names"`
		Action   string   `json:"action"`
		ErrnoRet *uint16  `json:"errnoRet"`
		Args     []struct {
			Index    int    `json:"index"`
			Value    uint64 `json:"value"`
			ValueTwo uint64 `json:"valueTwo"`
			Op       string `json:"op"`
		} `json:"args"`
	} `json:"syscalls"`
}

// ociErrno is the errno of an OCI SCMP_ACT_ERRNO action: its errnoRet, else EPERM (runc's
// default).
func ociErrno(ret *uint16) seccomp.Action {
	if ret == nil {
		return seccomp.ReturnError.Code(1)
	}
	return seccomp.ReturnError.Code(*ret)
}

// ociMatcher is the gVisor matcher of one OCI condition (64-bit comparisons, as libseccomp
// makes them on a 64-bit arch; SCMP_CMP_MASKED_EQ: the argument AND value equals valueTwo).
func ociMatcher(op string, value, valueTwo uint64) (seccomp.ValueMatcher, error) {
	switch op {
	case "SCMP_CMP_EQ":
		return seccomp.EqualTo(value), nil
	case "SCMP_CMP_NE":
		return seccomp.NotEqual(value), nil
	case "SCMP_CMP_LT":
		return seccomp.LessThan(value), nil
	case "SCMP_CMP_LE":
		return seccomp.LessThanOrEqual(value), nil
	case "SCMP_CMP_GT":
		return seccomp.GreaterThan(value), nil
	case "SCMP_CMP_GE":
		return seccomp.GreaterThanOrEqual(value), nil
	case "SCMP_CMP_MASKED_EQ":
		if valueTwo&^value != 0 {
			return nil, fmt.Errorf("masked value %#x has bits outside its mask %#x", valueTwo, value)
		}
		return seccomp.MaskedEqual(uintptr(value), uintptr(valueTwo)), nil
	}
	return nil, fmt.Errorf("operator %s not handled", op)
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

// firecrackerFilter is one thread's filter of a Firecracker seccompiler file.
type firecrackerFilter struct {
	DefaultAction json.RawMessage `json:"default_action"`
	FilterAction  json.RawMessage `json:"filter_action"`
	Filter        []struct {
		Syscall string `json:"syscall"`
		Args    []struct {
			Index int             `json:"index"`
			Type  string          `json:"type"`
			Op    json.RawMessage `json:"op"`
			Val   uint64          `json:"val"`
		} `json:"args"`
	} `json:"filter"`
}

// firecrackerAction reads "allow", "trap", "kill_thread", "kill_process" or {"errno": N}.
func firecrackerAction(raw json.RawMessage) (seccomp.Action, error) {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		switch name {
		case "allow":
			return seccomp.Allow, nil
		case "trap":
			return seccomp.Trap, nil
		case "kill_thread":
			return seccomp.KillThread, nil
		case "kill_process":
			return seccomp.KillProcess, nil
		}
	}
	var errno struct {
		Errno *uint16 `json:"errno"`
	}
	if json.Unmarshal(raw, &errno) == nil && errno.Errno != nil {
		return seccomp.ReturnError.Code(*errno.Errno), nil
	}
	return "", fmt.Errorf("action %s not handled", raw)
}

// firecrackerMatcher is the gVisor matcher of one Firecracker condition, with the meaning
// Firecracker's libseccomp-based compiler gives it.
func firecrackerMatcher(width string, rawOp json.RawMessage, val uint64) (seccomp.ValueMatcher, error) {
	var op string
	if json.Unmarshal(rawOp, &op) == nil {
		if width == "dword" && op == "eq" {
			// libseccomp MASKED_EQ with mask 0xffffffff: the low 32 bits equal.
			return seccomp.MaskedEqual(0xffffffff, uintptr(val&0xffffffff)), nil
		}
		if op == "masked_eq" {
			return nil, fmt.Errorf("masked_eq needs a mask")
		}
		// The other operators compare all 64 bits, as the OCI ones do.
		return ociMatcher("SCMP_CMP_"+strings.ToUpper(op), val, 0)
	}
	var masked struct {
		Mask *uint64 `json:"masked_eq"`
	}
	if json.Unmarshal(rawOp, &masked) == nil && masked.Mask != nil {
		return ociMatcher("SCMP_CMP_MASKED_EQ", *masked.Mask, val)
	}
	return nil, fmt.Errorf("operator %s not handled", rawOp)
}

// argRule is the rule of one entry with n conditions (condition i: its argument index and
// matcher), ANDed: MatchAll without conditions. At most one condition per argument.
func argRule(n int, cond func(i int) (int, seccomp.ValueMatcher, error)) (seccomp.SyscallRule, error) {
	if n == 0 {
		return seccomp.MatchAll{}, nil
	}
	var args seccomp.PerArg
	for i := range args {
		args[i] = seccomp.AnyValue{}
	}
	seen := make(map[int]bool)
	for i := 0; i < n; i++ {
		index, m, err := cond(i)
		if err != nil {
			return nil, err
		}
		if index < 0 || index > 5 || seen[index] {
			return nil, fmt.Errorf("condition on argument %d not handled", index)
		}
		seen[index] = true
		args[index] = m
	}
	return args, nil
}

// firecrackerProgram builds the rules of one thread of a Firecracker file.
func firecrackerProgram(raw []byte, thread string, nrs map[string]uintptr) (seccomp.RuleSet, seccomp.Action, error) {
	var file map[string]firecrackerFilter
	if err := json.Unmarshal(raw, &file); err != nil {
		return seccomp.RuleSet{}, "", err
	}
	f, ok := file[thread]
	if !ok {
		return seccomp.RuleSet{}, "", fmt.Errorf("no thread %q", thread)
	}
	def, err := firecrackerAction(f.DefaultAction)
	if err != nil {
		return seccomp.RuleSet{}, "", err
	}
	act, err := firecrackerAction(f.FilterAction)
	if err != nil {
		return seccomp.RuleSet{}, "", err
	}
	rules := seccomp.NewSyscallRules()
	for _, entry := range f.Filter {
		nr, ok := nrs[entry.Syscall]
		if !ok {
			return seccomp.RuleSet{}, "", fmt.Errorf("%s: not in the syscall table", entry.Syscall)
		}
		rule, err := argRule(len(entry.Args), func(i int) (int, seccomp.ValueMatcher, error) {
			a := entry.Args[i]
			m, err := firecrackerMatcher(a.Type, a.Op, a.Val)
			return a.Index, m, err
		})
		if err != nil {
			return seccomp.RuleSet{}, "", fmt.Errorf("%s: %w", entry.Syscall, err)
		}
		rules = rules.Add(nr, rule)
	}
	return seccomp.RuleSet{Rules: rules, Action: act}, def, nil
}

// ociProgram builds the rules of an OCI profile of tests/data/peers: one rule set per action
// (ALLOW first, then each errno), the entries of a syscall ORed, the conditions of an entry
// ANDed. A syscall must have one action (what these profiles do).
func ociProgram(raw []byte, nrs map[string]uintptr) ([]seccomp.RuleSet, seccomp.Action, error) {
	var p profile
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, "", err
	}
	var def seccomp.Action
	switch p.DefaultAction {
	case "SCMP_ACT_KILL", "SCMP_ACT_KILL_THREAD":
		def = seccomp.KillThread
	case "SCMP_ACT_ERRNO":
		def = ociErrno(p.DefaultErrnoRet)
	default:
		return nil, "", fmt.Errorf("default action %s not handled", p.DefaultAction)
	}
	var actions []seccomp.Action
	rulesOf := make(map[seccomp.Action]seccomp.SyscallRules)
	actionOf := make(map[uintptr]seccomp.Action)
	for _, entry := range p.Syscalls {
		var action seccomp.Action
		switch entry.Action {
		case "SCMP_ACT_ALLOW":
			action = seccomp.Allow
		case "SCMP_ACT_ERRNO":
			action = ociErrno(entry.ErrnoRet)
		default:
			return nil, "", fmt.Errorf("action %s not handled", entry.Action)
		}
		if _, ok := rulesOf[action]; !ok {
			actions = append(actions, action)
			rulesOf[action] = seccomp.NewSyscallRules()
		}
		rule, err := argRule(len(entry.Args), func(i int) (int, seccomp.ValueMatcher, error) {
			a := entry.Args[i]
			m, err := ociMatcher(a.Op, a.Value, a.ValueTwo)
			return a.Index, m, err
		})
		if err != nil {
			return nil, "", fmt.Errorf("%v: %w", entry.Names, err)
		}
		for _, name := range entry.Names {
			nr, ok := nrs[name]
			if !ok {
				return nil, "", fmt.Errorf("%s: not in the syscall table", name)
			}
			if other, ok := actionOf[nr]; ok && other != action {
				return nil, "", fmt.Errorf("%s: two actions (%s, %s) not handled", name, other, action)
			}
			actionOf[nr] = action
			rulesOf[action] = rulesOf[action].Add(nr, rule)
		}
	}
	var sets []seccomp.RuleSet
	for _, action := range actions {
		sets = append(sets, seccomp.RuleSet{Rules: rulesOf[action], Action: action})
	}
	return sets, def, nil
}

func run() error {
	noOptimize := flag.Bool("no-optimize", false, "turn gVisor's rule and bytecode optimizations off")
	thread := flag.String("firecracker", "", "read POLICY.json as a Firecracker file and compile this thread's filter")
	hot := flag.String("hot", "", "gVisor's HotSyscalls: comma-separated names, most frequent first")
	flag.Parse()
	if flag.NArg() != 3 {
		return fmt.Errorf("usage: gvisor-compile [-no-optimize] [-firecracker THREAD] [-hot NAME,...] POLICY.json UNISTD_64_H OUT.bpf")
	}
	in, header, outPath := flag.Arg(0), flag.Arg(1), flag.Arg(2)
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	nrs, err := numbers(header)
	if err != nil {
		return err
	}
	var ruleSets []seccomp.RuleSet
	var def seccomp.Action
	if *thread != "" {
		var ruleSet seccomp.RuleSet
		ruleSet, def, err = firecrackerProgram(raw, *thread, nrs)
		ruleSets = []seccomp.RuleSet{ruleSet}
	} else {
		ruleSets, def, err = ociProgram(raw, nrs)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	var hotNrs []uintptr
	if *hot != "" {
		for _, name := range strings.Split(*hot, ",") {
			nr, ok := nrs[name]
			if !ok {
				return fmt.Errorf("-hot %s: not in %s", name, header)
			}
			hotNrs = append(hotNrs, nr)
		}
	}
	program := seccomp.Program{
		RuleSets: ruleSets,
		Options: seccomp.ProgramOptions{
			DefaultAction:     def,
			BadArchAction:     seccomp.KillThread,
			SkipOptimizations: *noOptimize,
			HotSyscalls:       hotNrs,
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
	fmt.Fprintf(os.Stderr, "%s: %d instructions (%d before gVisor's optimizations)\n", outPath, stats.SizeAfterOptimizations, stats.SizeBeforeOptimizations)
	return os.WriteFile(outPath, out, 0o644)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gvisor-compile:", err)
		os.Exit(1)
	}
}
