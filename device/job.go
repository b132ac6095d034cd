package device

import (
	"context"
	"fmt"
	"sync"

	"github.com/rosemary-fhe/rosemary/compiler/isa"
	"github.com/rosemary-fhe/rosemary/device/api"
	"github.com/rosemary-fhe/rosemary/device/api/devicepb"
	"github.com/rosemary-fhe/rosemary/device/store"
	"github.com/rosemary-fhe/rosemary/engine"
)

// maxJobScratch bounds the DRAM objects one job writes besides its output.
const maxJobScratch = 256 << 20

// source is where an operand's limbs come from.
type source uint8

const (
	sourceNone     source = iota
	sourceInline          // limbs carried by the request
	sourceStored          // a stored object (from poly Poly on), read in place
	sourceResident        // the result of an earlier job, held in device DRAM
)

// binding is one operand of a Send, decoded: an object of the program
// (space, ID, and its shape as the program sees it: Polys × Limbs, limb l
// of poly p at index p·Limbs+l) and where its limbs come from.
type binding struct {
	Space            uint8
	ID, Polys, Limbs uint32
	Source           source
	Inline           [][]uint64 // sourceInline
	Name             string     // sourceStored: the object
	Poly             uint32     // sourceStored: first poly of the instance
	Job              uint64     // sourceResident
}

// bindingOf decodes an operand api.CheckSend passed.
func bindingOf(what string, m *devicepb.Binding) (binding, error) {
	b := binding{Space: uint8(m.GetSpace()), ID: m.GetId(), Polys: m.GetPolys(), Limbs: m.GetLimbs()}
	var err error
	switch src := m.GetSource().(type) {
	case *devicepb.Binding_Inline:
		b.Source = sourceInline
		b.Inline, err = api.DecodeLimbs(what, src.Inline.GetData())
	case *devicepb.Binding_Stored:
		b.Source, b.Name, b.Poly = sourceStored, src.Stored.GetName(), src.Stored.GetPoly()
	case *devicepb.Binding_ResidentJob:
		b.Source, b.Job = sourceResident, src.ResidentJob
	}
	return b, err
}

// operand is a validated binding.
type operand struct {
	b      binding
	obj    *store.Object // sourceStored (pinned)
	stride int           // sourceStored: limbs per poly of the stored object
	dep    *job          // sourceResident
	depID  uint64
}

// sendBindings checks a Send and decodes its inputs, then its key (if
// any), then its output (no source).
func sendBindings(req *devicepb.SendRequest) ([]binding, binding, error) {
	if err := api.CheckSend(req); err != nil {
		return nil, binding{}, err
	}
	var binds []binding
	for i, m := range req.GetInputs() {
		b, err := bindingOf(fmt.Sprintf("input %d", i), m)
		if err != nil {
			return nil, binding{}, err
		}
		binds = append(binds, b)
	}
	if req.GetKey() != nil {
		b, err := bindingOf("key", req.GetKey())
		if err != nil {
			return nil, binding{}, err
		}
		binds = append(binds, b)
	}
	out := req.GetOutput()
	return binds, binding{Space: uint8(out.GetSpace()), ID: out.GetId(), Polys: out.GetPolys(), Limbs: out.GetLimbs()}, nil
}

// Send validates a job and starts it; the job id is returned at once.
func (d *Device) Send(ctx context.Context, req *devicepb.SendRequest) (*devicepb.SendResponse, error) {
	binds, output, err := sendBindings(req)
	if err != nil {
		return nil, fmt.Errorf("device: send: %w", err)
	}
	if req.GetProgram() == "" {
		return d.hold(ctx, binds, req.GetKey() != nil)
	}
	set, ok := d.progs.get(req.GetProgram())
	if !ok {
		return nil, fmt.Errorf("device: send: %w: program %q not set", api.ErrNotFound, req.GetProgram())
	}
	p := set.p
	n := p.Config.N()
	if inputs := len(req.GetInputs()); inputs == 0 {
		return nil, fmt.Errorf("device: send: %w: %d inputs (want 1..%d)", api.ErrInvalid, inputs, api.MaxBindings)
	}
	seen := map[[2]uint64]bool{}
	for _, b := range append(append([]binding(nil), binds...), output) {
		if err := checkBinding(b); err != nil {
			return nil, fmt.Errorf("device: send: %w", err)
		}
		k := [2]uint64{uint64(b.Space), uint64(b.ID)}
		if seen[k] {
			return nil, fmt.Errorf("device: send: %w: object %s[%d] bound twice", api.ErrInvalid, isa.Space(b.Space), b.ID)
		}
		seen[k] = true
	}
	if isa.Space(output.Space) != isa.SpaceDRAM {
		return nil, fmt.Errorf("device: send: %w: output must be a DRAM object, not %s", api.ErrInvalid, isa.Space(output.Space))
	}
	ops := make([]operand, len(binds))
	release := func() {
		for _, o := range ops {
			if o.obj != nil {
				o.obj.Release()
			}
		}
	}
	for i, b := range binds {
		o, err := d.resolve(b, n)
		if err != nil {
			release()
			return nil, fmt.Errorf("device: send: operand %d: %w", i, err)
		}
		ops[i] = o
	}
	outBytes := int64(output.Polys) * int64(output.Limbs) * int64(n) * 8
	j := &job{done: make(chan struct{}), polys: int(output.Polys), bytes: outBytes, caller: quotaCaller(ctx)}
	id, err := d.register(j)
	if err != nil {
		release()
		return nil, fmt.Errorf("device: send: %w", err)
	}
	go func() {
		defer close(j.done)
		defer release()
		j.err = d.execute(j, p, ops, output)
	}()
	return &devicepb.SendResponse{Job: id}, nil
}

func checkBinding(b binding) error {
	switch isa.Space(b.Space) {
	case isa.SpaceDRAM, isa.SpaceNAND:
	default:
		return fmt.Errorf("%w: operand space %d is not DRAM or NAND", api.ErrInvalid, b.Space)
	}
	if b.ID >= isa.MaxObjects {
		return fmt.Errorf("%w: object id %d ≥ %d", api.ErrInvalid, b.ID, isa.MaxObjects)
	}
	if b.Polys == 0 || b.Limbs == 0 || b.Polys > 255 || b.Limbs > 1<<isa.LimbBits {
		return fmt.Errorf("%w: object of %d polys × %d limbs", api.ErrInvalid, b.Polys, b.Limbs)
	}
	if b.Polys*b.Limbs > 1<<isa.LimbBits {
		return fmt.Errorf("%w: object of %d limbs exceeds the %d an address reaches", api.ErrInvalid, b.Polys*b.Limbs, 1<<isa.LimbBits)
	}
	return nil
}

// resolve checks one operand against what the device holds.
func (d *Device) resolve(b binding, n int) (operand, error) {
	o := operand{b: b}
	switch b.Source {
	case sourceInline:
		if len(b.Inline) != int(b.Polys*b.Limbs) {
			return o, fmt.Errorf("%w: %d inline limbs for %d polys × %d limbs", api.ErrInvalid, len(b.Inline), b.Polys, b.Limbs)
		}
		if len(b.Inline[0]) != n {
			return o, fmt.Errorf("%w: inline limbs of %d coefficients, the program's ring has %d", api.ErrInvalid, len(b.Inline[0]), n)
		}
	case sourceStored:
		obj, err := d.st.Acquire(b.Name)
		if err != nil {
			return o, fmt.Errorf("%w: stored object %q: %w", api.ErrNotFound, b.Name, err)
		}
		sh := obj.Info().Shape
		switch {
		case sh.WordSize != 8 || 1<<sh.LogN != n:
			err = fmt.Errorf("%w: stored object %q has %d-byte words and N=%d, the program wants 8 and %d", api.ErrInvalid, b.Name, sh.WordSize, 1<<sh.LogN, n)
		case int(b.Poly)+int(b.Polys) > sh.Polys:
			err = fmt.Errorf("%w: stored object %q has %d polys, operand reads %d from poly %d", api.ErrInvalid, b.Name, sh.Polys, b.Polys, b.Poly)
		case int(b.Limbs) > sh.Limbs:
			err = fmt.Errorf("%w: stored object %q has %d limbs per poly, operand reads %d", api.ErrInvalid, b.Name, sh.Limbs, b.Limbs)
		}
		if err != nil {
			obj.Release()
			return o, err
		}
		o.obj, o.stride = obj, sh.Limbs
	case sourceResident:
		d.mu.Lock()
		j, ok := d.jobs[b.Job]
		d.mu.Unlock()
		if !ok {
			return o, fmt.Errorf("%w: job %d (released or never sent)", api.ErrNotFound, b.Job)
		}
		o.dep, o.depID = j, b.Job
	default:
		return o, fmt.Errorf("%w: operand source %d", api.ErrInvalid, b.Source)
	}
	return o, nil
}

// register charges a job's result to device DRAM and names it. A caller
// with a certificate identity (quotaCaller) holds at most its share of the
// jobs and of DRAM, so no caller can fill them for the others.
func (d *Device) register(j *job) (uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.jobs) >= d.lim.MaxJobs {
		return 0, fmt.Errorf("%w: %d jobs not released", api.ErrExhausted, len(d.jobs))
	}
	if d.resident+j.bytes > d.lim.MaxResidentBytes {
		return 0, fmt.Errorf("%w: %d bytes resident, %d more exceed %d", api.ErrExhausted, d.resident, j.bytes, d.lim.MaxResidentBytes)
	}
	if j.caller != "" {
		u := d.usage[j.caller]
		if u.jobs >= d.lim.MaxJobsPerCaller {
			return 0, fmt.Errorf("%w: %s holds %d jobs not released (its share)", api.ErrExhausted, j.caller, u.jobs)
		}
		if u.bytes+j.bytes > d.lim.MaxResidentBytesPerCaller {
			return 0, fmt.Errorf("%w: %s holds %d bytes resident, %d more exceed its share of %d", api.ErrExhausted, j.caller, u.bytes, j.bytes, d.lim.MaxResidentBytesPerCaller)
		}
		d.usage[j.caller] = callerUse{jobs: u.jobs + 1, bytes: u.bytes + j.bytes}
	}
	d.resident += j.bytes
	if d.resident > d.peak {
		d.peak = d.resident
	}
	d.nextJob++
	d.jobs[d.nextJob] = j
	return d.nextJob, nil
}

// hold is an upload: a job whose result is its one inline operand.
func (d *Device) hold(ctx context.Context, binds []binding, hasKey bool) (*devicepb.SendResponse, error) {
	if len(binds) != 1 || hasKey || binds[0].Source != sourceInline {
		return nil, fmt.Errorf("device: send: %w: an upload (no program) takes one inline operand and no key", api.ErrInvalid)
	}
	b := binds[0]
	if b.Polys == 0 || b.Limbs == 0 || len(b.Inline) != int(b.Polys)*int(b.Limbs) {
		return nil, fmt.Errorf("device: send: %w: upload of %d limbs for %d polys × %d limbs", api.ErrInvalid, len(b.Inline), b.Polys, b.Limbs)
	}
	j := &job{done: make(chan struct{}), polys: int(b.Polys), result: b.Inline, bytes: limbBytes(b.Inline), caller: quotaCaller(ctx)}
	close(j.done)
	id, err := d.register(j)
	if err != nil {
		return nil, fmt.Errorf("device: send: %w", err)
	}
	d.jobsRun.Add(1)
	return &devicepb.SendResponse{Job: id}, nil
}

// execute runs a job: waits for the results it reads, then runs the
// program in ISP mode with LD operands read from the store in place.
func (d *Device) execute(j *job, p *isa.Program, ops []operand, out binding) error {
	for _, o := range ops {
		if o.dep == nil {
			continue
		}
		<-o.dep.done
		if o.dep.err != nil {
			return fmt.Errorf("operand job %d failed: %w", o.depID, o.dep.err)
		}
		if o.dep.polys != int(o.b.Polys) || len(o.dep.result) < o.dep.polys*int(o.b.Limbs) || len(o.dep.result)%o.dep.polys != 0 {
			return fmt.Errorf("%w: job %d holds %d polys of %d limbs, operand wants %d × %d", api.ErrInvalid, o.depID,
				o.dep.polys, len(o.dep.result)/max(o.dep.polys, 1), o.b.Polys, o.b.Limbs)
		}
		if len(o.dep.result[0]) != p.Config.N() {
			return fmt.Errorf("%w: job %d holds limbs of %d coefficients, the program wants %d", api.ErrInvalid, o.depID, len(o.dep.result[0]), p.Config.N())
		}
	}
	d.sem <- struct{}{}
	defer func() { <-d.sem }()
	d.enterISP()
	defer d.leaveISP()

	mem := &jobMemory{ops: map[[2]int]*operand{}, written: map[[2]int][][]uint64{}, keys: d.keys}
	for i := range ops {
		o := &ops[i]
		mem.ops[[2]int{int(o.b.Space), int(o.b.ID)}] = o
	}
	m, err := engine.NewMachine(p.Config, mem)
	if err != nil {
		return err
	}
	st, err := m.Run(p)
	j.st, j.stored = st, mem.stored
	d.storeRead.Add(mem.stored)
	d.microOps.Add(st.MicroOps)
	d.instrs.Add(st.Instructions)
	d.jobsRun.Add(1)
	if err != nil {
		return err
	}
	res := mem.written[[2]int{int(out.Space), int(out.ID)}]
	want := int(out.Polys * out.Limbs)
	if len(res) < want {
		return fmt.Errorf("program wrote %d limbs of the output, want %d", len(res), want)
	}
	for i, l := range res[:want] {
		if l == nil {
			return fmt.Errorf("program did not write output limb %d", i)
		}
	}
	j.result = res[:want]
	return nil
}

// enterISP starts in-storage processing: conventional writes wait until
// the last job or run leaves (ISP mode, as in the paper: the store is not
// written under a running scan). The writes queue rather than fail — a
// database loads between queries — and a waiting write holds new jobs
// back once it has waited longer than Limits.WriteWait (ispGate).
func (d *Device) enterISP() {
	d.isp.enter()
	d.rss.begin()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ispJobs == 0 {
		d.st.SetISP(true)
	}
	d.ispJobs++
}

func (d *Device) leaveISP() {
	d.mu.Lock()
	if d.ispJobs--; d.ispJobs == 0 {
		d.st.SetISP(false)
	}
	d.mu.Unlock()
	d.rss.end()
	d.isp.leave()
}

// write runs a conventional write (Put, Delete) outside ISP mode, waiting
// for a moment when no job runs. Writes run side by side (ispGate).
func (d *Device) write(f func() error) error {
	d.isp.lock()
	defer d.isp.unlock()
	return f()
}

// jobMemory is a job's ObjectMemory: bound operands (inline, resident, or
// stored objects read from the store limb by limb) and the DRAM objects
// the program writes. NAND is read-only during a job.
type jobMemory struct {
	mu      sync.Mutex
	ops     map[[2]int]*operand
	written map[[2]int][][]uint64
	scratch int64
	stored  int64
	buf     []byte
	keys    *keyCache // evaluation-key limbs kept between jobs
}

// ReadLimb implements engine.ObjectMemory.
func (m *jobMemory) ReadLimb(s isa.Space, obj, limb int, dst []uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]int{int(s), obj}
	if w, ok := m.written[k]; ok {
		if limb >= len(w) || w[limb] == nil {
			return fmt.Errorf("device: object %s[%d] limb %d was never written", s, obj, limb)
		}
		copy(dst, w[limb])
		return nil
	}
	o, ok := m.ops[k]
	if !ok {
		return fmt.Errorf("device: program reads object %s[%d], which the job does not bind", s, obj)
	}
	if limb >= int(o.b.Polys*o.b.Limbs) {
		return fmt.Errorf("device: program reads limb %d of object %s[%d] (%d polys × %d limbs bound)", limb, s, obj, o.b.Polys, o.b.Limbs)
	}
	poly, l := limb/int(o.b.Limbs), limb%int(o.b.Limbs)
	var src []uint64
	switch o.b.Source {
	case sourceInline:
		src = o.b.Inline[limb]
	case sourceResident:
		per := len(o.dep.result) / o.dep.polys
		src = o.dep.result[poly*per+l]
	case sourceStored:
		info := o.obj.Info()
		ck := keyLimb{name: info.Name, gen: info.Generation, poly: int(o.b.Poly) + poly, limb: l, coefficient: len(dst)}
		isKey := info.Kind == store.KindKey
		if isKey && m.keys.get(ck, dst) {
			return nil
		}
		if cap(m.buf) < 8*len(dst) {
			m.buf = make([]byte, 8*len(dst))
		}
		b := m.buf[:8*len(dst)]
		if err := o.obj.ReadLimbInto(b, int(o.b.Poly)+poly, l); err != nil {
			return fmt.Errorf("device: LD %s[%d] limb %d: %w", s, obj, limb, err)
		}
		m.stored += int64(len(b))
		decodeWords(b, dst)
		if isKey {
			m.keys.put(ck, dst)
		}
		return nil
	}
	if len(src) != len(dst) {
		return fmt.Errorf("device: object %s[%d] limb %d has %d coefficients, want %d", s, obj, limb, len(src), len(dst))
	}
	copy(dst, src)
	return nil
}

// WriteLimb implements engine.ObjectMemory.
func (m *jobMemory) WriteLimb(s isa.Space, obj, limb int, src []uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s != isa.SpaceDRAM {
		return fmt.Errorf("device: ST to %s[%d]: only DRAM objects are written during a job (ISP mode)", s, obj)
	}
	k := [2]int{int(s), obj}
	if _, ok := m.ops[k]; ok {
		return fmt.Errorf("device: ST to input object %s[%d]", s, obj)
	}
	if limb >= 1<<isa.LimbBits {
		return fmt.Errorf("device: ST to limb %d of %s[%d]", limb, s, obj)
	}
	w := m.written[k]
	for len(w) <= limb {
		w = append(w, nil)
	}
	if w[limb] == nil {
		m.scratch += int64(8 * len(src))
		if m.scratch > maxJobScratch {
			return fmt.Errorf("device: job writes more than %d bytes of DRAM objects", maxJobScratch)
		}
	}
	w[limb] = append(w[limb][:0], src...)
	m.written[k] = w
	return nil
}

// limbBytes is the payload size of limbs.
func limbBytes(l [][]uint64) int64 {
	if len(l) == 0 {
		return 0
	}
	return int64(len(l)) * int64(len(l[0])) * 8
}
