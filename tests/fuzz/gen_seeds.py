#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""gen_seeds.py - writes the seed corpora of the fuzz harnesses.

    tests/fuzz/gen_seeds.py GOBIN_DIR [TRACE_FILE...]

GOBIN_DIR holds the workloads `make workloads` builds (build/go-bin).
Seeds go to tests/fuzz/corpus/<harness>/; the committed ones were made
with this script and are small (the whole corpus stays under 2 MB):

  buildinfo    the .go.buildinfo section of allocloop built by Go 1.21-1.27,
               and pre-1.18 blobs (pointers to Go string headers; 8-byte
               little-endian and 4-byte big-endian) with quoted settings
  pclntab      each version's .gopclntab cut down to the functions the
               tracer probes plus a few dozen more, with their real pcsp
               tables; also rewritten in the 1.18 and 1.16 layouts
  disasm       the code of the probed runtime functions, per version
  types        the start of each version's types section, with descriptors
               found in it (names, sizes, tflags as the linker wrote them)
  elf, dwarf   small synthetic Go binaries (a few KiB) around a real build
               info blob: runtime functions with Go's stack-check prologue,
               a pclntab, moduledata, type descriptors, and DWARF describing
               the runtime structs with the offsets of go_layout_table.c;
               variants: stripped, no section headers, PIE, pclntab 1.16 /
               1.18, old build info, DWARF 4 / 5
  trace_decode TRACE_FILEs (files the tracer wrote) cut at batch boundaries
  trace_writer small programs for the encoder harness

Only the standard library; the ELF and DWARF writers below write what the
readers in user/ need, and nothing more.
"""
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, 'corpus')
VERSIONS = ['1.21', '1.22', '1.23', '1.24', '1.25', '1.26', '1.27']

PROBED = ['runtime.mallocgc', 'runtime.(*mheap).initSpan',
          'runtime.(*sweepLocked).sweep', 'runtime.(*mheap).freeSpanLocked',
          'runtime.stackalloc', 'runtime.stackfree', 'runtime.(*mheap).alloc',
          'runtime.allgadd', 'runtime.forEachG']


def u32(b, o):
    return struct.unpack_from('<I', b, o)[0]


def u64(b, o):
    return struct.unpack_from('<Q', b, o)[0]


def uvarint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def read_uvarint(b, o):
    v = s = 0
    while True:
        x = b[o]
        o += 1
        v |= (x & 0x7f) << s
        s += 7
        if x < 0x80:
            return v, o


def cstr(b, o):
    return b[o:b.index(b'\0', o)].decode('latin-1')


def save(harness, name, data):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)


# ---- reading real binaries ------------------------------------------------

class Elf:
    def __init__(self, path):
        self.d = d = open(path, 'rb').read()
        shoff = u64(d, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)
        raw = [struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize)
               for i in range(shnum)]
        stro = raw[shstrndx][4]
        self.secs = {}
        self.raw = raw
        for s in raw:
            self.secs[cstr(d, stro + s[0])] = s
        self.syms = {}
        if '.symtab' in self.secs:
            st = self.secs['.symtab']
            strs = raw[st[6]][4]
            for o in range(st[4], st[4] + st[5], 24):
                nm, info, other, shndx, val, size = struct.unpack_from(
                    '<IBBHQQ', d, o)
                if nm and shndx:
                    self.syms.setdefault(cstr(d, strs + nm), (val, size))

    def section(self, name):
        s = self.secs[name]
        return s[3], self.d[s[4]:s[4] + s[5]]

    def read(self, addr, n):
        for s in self.raw:
            if s[1] != 8 and s[3] and s[3] <= addr and addr + n <= s[3] + s[5]:
                o = s[4] + addr - s[3]
                return self.d[o:o + n]
        raise KeyError(hex(addr))


def gobin(gobin_dir, name):
    return Elf(os.path.join(gobin_dir, name))


def pcvalue_stream(tab, o):
    """The bytes of one pc-value table (runtime/symtab.go step)."""
    start, first = o, True
    while True:
        v, o2 = read_uvarint(tab, o)
        if v == 0 and not first:
            return tab[start:o2]
        _, o = read_uvarint(tab, o2)
        first = False


def parse_pclntab(tab):
    """Go 1.20+ table -> functions and the end of text (entry offsets)."""
    assert u32(tab, 0) == 0xfffffff1
    nfunc, _, _, fnoff, _, _, pctab, pcln = struct.unpack_from('<8Q', tab, 8)
    funcs = []
    for i in range(nfunc):
        entryoff, funcoff = struct.unpack_from('<II', tab, pcln + 8 * i)
        fo = pcln + funcoff
        f = struct.unpack_from('<IiiIIIIIIiBBBB', tab, fo)
        funcs.append(dict(name=cstr(tab, fnoff + f[1]), entry=entryoff,
                          args=f[2], pcsp=pcvalue_stream(tab, pctab + f[4])
                          if f[4] else b'', funcid=f[10], flag=f[11]))
    end = struct.unpack_from('<I', tab, pcln + 8 * nfunc)[0]
    return funcs, end


def build_pclntab(funcs, end, fmt, text_start=0):
    """funcs: name, entry (offset from text for 1.18+, address for 1.16),
    pcsp stream, funcid, args.  fmt: 116, 118 or 120."""
    magic = {116: 0xfffffffa, 118: 0xfffffff0, 120: 0xfffffff1}[fmt]
    names, nameoff = bytearray(), []
    for f in funcs:
        nameoff.append(len(names))
        names += f['name'].encode() + b'\0'
    pctab, pcspoff = bytearray(b'\0'), []
    for f in funcs:
        pcspoff.append(len(pctab) if f['pcsp'] else 0)
        pctab += f['pcsp']
    cutab, filetab = b'\0\0\0\0', b'\0'
    o = 72
    fn_o = o
    o += len(names)
    cu_o = o
    o += len(cutab)
    file_o = o
    o += len(filetab)
    pc_o = o
    o += len(pctab)
    o = (o + 7) & ~7
    pcln_o = o
    n = len(funcs)
    if fmt == 116:
        ftab = bytearray(16 * (n + 1))
    else:
        ftab = bytearray(8 * (n + 1))
    fdata = bytearray()
    for i, f in enumerate(funcs):
        funcoff = len(ftab) + len(fdata)
        if fmt == 116:
            struct.pack_into('<QQ', ftab, 16 * i, f['entry'], funcoff)
            rec = struct.pack('<QiiIIIIII', f['entry'], nameoff[i], f['args'],
                              0, pcspoff[i], 0, 0, 0, 0)
        else:
            struct.pack_into('<II', ftab, 8 * i, f['entry'], funcoff)
            rec = struct.pack('<IiiIIIIII', f['entry'], nameoff[i], f['args'],
                              0, pcspoff[i], 0, 0, 0, 0)
            if fmt == 120:
                rec += struct.pack('<i', 0)  # startLine
        rec += struct.pack('<BBBB', f['funcid'], f.get('flag', 0), 0, 0)
        fdata += rec + b'\0' * (-len(rec) % 8)
    if fmt == 116:
        struct.pack_into('<QQ', ftab, 16 * n, end, 0)
    else:
        struct.pack_into('<II', ftab, 8 * n, end, 0)
    fdata += b'\0' * 8  # what follows the last _func (pcdata, funcdata)
    if fmt == 116:
        words = [n, 1, fn_o, cu_o, file_o, pc_o, pcln_o, 0]
    else:
        words = [n, 1, text_start, fn_o, cu_o, file_o, pc_o, pcln_o]
    hdr = struct.pack('<IBBBB8Q', magic, 0, 0, 1, 8, *words)
    out = hdr + names + cutab + filetab + pctab
    out += b'\0' * (pcln_o - len(out))
    return bytes(out + ftab + fdata)


# ---- seeds from the real workloads ---------------------------------------

def seeds_buildinfo(gd):
    blob = None
    for v in VERSIONS:
        e = gobin(gd, 'allocloop-go' + v)
        _, blob = e.section('.go.buildinfo')
        save('buildinfo', 'go%s' % v, blob)
    # Pre-1.18: header with pointers to {data, len} string headers.
    start = blob[blob.index(b'0w\xaf\x0c'):]
    modinfo = start[:start.index(b'\xf92C1') + 16]
    quoted = modinfo.replace(
        b'build\t-buildmode=exe\n',
        b'build\t-buildmode=exe\nbuild\t-ldflags="-s -w -X \\"main.v=1\\" \\x41\\u00e9"\n'
        b'build\t"odd key"=`raw value`\nbuild\tGOEXPERIMENT=nogreenteagc,arenas\n'
        b'build\tvcs.revision=0123456789abcdef\ndep\tgolang.org/x/sys\tv0.1.0\th1:abc=\n')
    for name, ver, mod in (('old-go1.16', b'go1.16.15', modinfo),
                           ('old-quoted', b'devel go1.17-abc123 Tue', quoted)):
        base = 0x530000
        strs = base + 64
        hdr = bytearray(b'\xff Go buildinf:' + bytes([8, 0]))
        hdr += struct.pack('<QQ', base + 32, base + 48)
        hdr += struct.pack('<QQ', strs, len(ver))
        hdr += struct.pack('<QQ', strs + len(ver), len(mod))
        save('buildinfo', name, bytes(hdr) + ver + mod)
    # 4-byte big-endian pointers.
    base = 0x530000
    ver = b'go1.12.17'
    hdr = bytearray(b'\xff Go buildinf:' + bytes([4, 1]))
    hdr += struct.pack('>II', base + 32, base + 40)
    hdr += b'\0' * (32 - len(hdr))
    hdr += struct.pack('>II', base + 48, len(ver))
    hdr += struct.pack('>II', base + 48 + len(ver), len(modinfo))
    save('buildinfo', 'old-be32', bytes(hdr) + ver + modinfo)
    # 1.18+ inline, with the quoted settings.
    inl = b'\xff Go buildinf:' + bytes([8, 2]) + b'\0' * 16
    inl += uvarint(9) + b'go1.24.13' + uvarint(len(quoted)) + quoted
    save('buildinfo', 'inline-quoted', inl)


def cut_functions(funcs, end, extra=30):
    keep = set(PROBED)
    chosen = [i for i, f in enumerate(funcs) if f['name'] in keep]
    chosen += list(range(min(extra, len(funcs))))
    chosen += [i for i, f in enumerate(funcs) if f['funcid']][:5]
    chosen = sorted(set(chosen))
    out = [dict(funcs[i]) for i in chosen]
    last = chosen[-1]
    stop = funcs[last + 1]['entry'] if last + 1 < len(funcs) else end
    return out, stop


def seeds_pclntab(gd):
    for v in VERSIONS:
        e = gobin(gd, 'allocloop-go' + v)
        _, tab = e.section('.gopclntab')
        funcs, end = parse_pclntab(tab)
        cut, stop = cut_functions(funcs, end)
        save('pclntab', 'go%s' % v, build_pclntab(cut, stop, 120))
        if v == '1.21':
            save('pclntab', 'go1.21-as-1.18', build_pclntab(cut, stop, 118))
            text = e.syms['runtime.text'][0]
            abs_ = [dict(f, entry=f['entry'] + text) for f in cut]
            save('pclntab', 'go1.21-as-1.16',
                 build_pclntab(abs_, stop + text, 116))


def seeds_disasm(gd):
    names = PROBED + ['runtime.mallocgcSmallScanNoHeaderSC1',
                      'runtime.mallocgcTinySC2', 'runtime.morestack',
                      'runtime.memmove']
    for v in ('1.21', '1.24', '1.27'):
        e = gobin(gd, 'allocloop-go' + v)
        for n in names:
            if n not in e.syms:
                continue
            addr, size = e.syms[n]
            if not size or size > 4096:
                continue
            short = re.sub(r'[^A-Za-z0-9]+', '_', n.replace('runtime.', ''))
            save('disasm', 'go%s-%s' % (v, short.strip('_')),
                 e.read(addr, size))


def find_descriptors(types, want=8):
    """Offsets of plausible abi.Type descriptors in the start of types."""
    found = []
    for o in range(0, len(types) - 48, 8):
        size, ptr = u64(types, o), u64(types, o + 8)
        tflag, kind = types[o + 20], types[o + 23] & 0x1f
        s = struct.unpack_from('<i', types, o + 40)[0]
        if not (0 < size < 1 << 20 and ptr <= size and 0 < kind <= 26 and
                tflag < 16 and 0 < s < len(types) - 2):
            continue
        try:
            n, p = read_uvarint(types, s + 1)
        except IndexError:
            continue
        name = types[p:p + n]
        if not (0 < n < 64 and p + n <= len(types) and
                re.fullmatch(rb'[\x21-\x7e][\x20-\x7e]*', name)):
            continue
        found.append(o)
        if len(found) == want:
            break
    return found


def seeds_types(gd, chunk=12 * 1024):
    for v in VERSIONS:
        e = gobin(gd, 'allocloop-go' + v)
        t, et = e.syms['runtime.types'][0], e.syms['runtime.etypes'][0]
        types = e.read(t, min(chunk, et - t))
        offs = find_descriptors(types)
        offs += [0] * (8 - len(offs))
        # abi.Type: Size_ 0/8, PtrBytes 8/8, TFlag 20/1, Str 40/4.
        hdr = bytes([0, 8, 8, 8, 20, 1, 40, 4])
        etypes = et - t if v in ('1.21', '1.25') else len(types)
        hdr += struct.pack('<II8I', 0, etypes, *offs)
        save('types', 'go%s' % v, hdr + types)


# ---- a small synthetic Go binary ------------------------------------------

def layout_of(minor):
    """{field: (off, size)} of go1.<minor> in user/inspect/go_layout_table.c."""
    src = open(os.path.join(ROOT, 'user', 'go_layout_table.c')).read()
    for block in re.split(r'\n\t\{\n', src)[1:]:
        if re.search(r'\.minor = %d,' % minor, block):
            out = {}
            for m in re.finditer(r'\.(\w+) = \{ (-?\w+), (\d+) \}', block):
                off = m.group(2)
                out[m.group(1)] = (None if not off.lstrip('-').isdigit()
                                   else int(off), int(m.group(3)))
            return out
    raise KeyError(minor)


def zigzag(v):
    return (v << 1) ^ (v >> 63) if v >= 0 else ((-v) << 1) - 1


def pcsp_for(size):
    a = min(10, size)
    b = max(0, size - a - 4)
    return (uvarint(2) + uvarint(a) + uvarint(zigzag(8)) + uvarint(b) +
            uvarint(zigzag(-8)) + uvarint(size - a - b) + b'\0')


def rel(end, target):
    return struct.pack('<i', target - end)


def go_func(entry, body, sym, lea_prologue=False):
    """Go's stack check, PUSHQ BP frame, body, RET, morestack tail."""
    c = bytearray()
    if lea_prologue:
        c += b'\x4c\x8d\x64\x24\xf0' + b'\x4d\x3b\x66\x10'  # LEAQ; CMPQ R12
    else:
        c += b'\x49\x3b\x66\x10'                            # CMPQ SP
    jbe = len(c)
    c += b'\x0f\x86\0\0\0\0'                                # JLS morestack
    c += b'\x55\x48\x89\xe5'                                # PUSHQ BP
    c += body(entry + len(c), sym)
    c += b'\x5d\xc3'                                        # POPQ BP; RET
    ms = len(c)
    struct.pack_into('<i', c, jbe + 2, ms - (jbe + 6))
    c += b'\xe8' + rel(entry + ms + 5, sym['runtime.morestack_noctxt'])
    c += b'\xe9' + rel(entry + ms + 10, entry)
    return bytes(c)


def body_mallocgc(at, s):
    c = b'\x48\x8d\x05' + rel(at + 7, s['runtime.mheap_'])      # LEAQ AX
    c += b'\xe8' + rel(at + 12, s['runtime.(*mheap).alloc'])    # CALL
    c += b'\x48\x85\xc0\x74\x02\x5d\xc3\x31\xc0'                # early RET
    return c


def body_allgadd(at, s):
    g = s['runtime.allgs']
    return (b'\x48\x8b\x0d' + rel(at + 7, g) +
            b'\x48\x8b\x15' + rel(at + 14, g + 8) +
            b'\x48\x8b\x1d' + rel(at + 21, g + 16) +
            b'\x48\x89\x05' + rel(at + 28, g))


def body_foreachg(at, s):
    g = s['runtime.allgs']
    return (b'\x48\x8b\x05' + rel(at + 7, g) +
            b'\x48\x8b\x0d' + rel(at + 14, g + 8))


def body_main(at, s):
    return b'\xe8' + rel(at + 5, s['runtime.mallocgc']) + b'\x90'


def body_nops(at, s):
    return b'\x0f\x1f\x40\x00\x90\x48\x8b\x08'


FUNCS = [
    # name, body, lea prologue, funcID (non-zero: an ABI wrapper)
    ('internal/abi.(*RegArgs).Dump', body_nops, False, 0),
    ('runtime.morestack_noctxt', None, False, 0),
    ('runtime.(*mheap).alloc', body_nops, False, 0),
    ('runtime.mallocgc', body_mallocgc, False, 0),
    ('runtime.(*mheap).initSpan', body_nops, False, 0),
    ('runtime.(*sweepLocked).sweep', body_nops, True, 0),
    ('runtime.(*mheap).freeSpanLocked', body_nops, False, 0),
    ('runtime.stackalloc', body_nops, True, 0),
    ('runtime.stackfree', body_nops, False, 0),
    ('runtime.allgadd', body_allgadd, False, 0),
    ('runtime.forEachG', body_foreachg, False, 21),
    ('runtime.forEachG', body_foreachg, False, 0),
    ('main.main', body_main, False, 0),
]


def dwarf(L, minor, addrs, node_type_off, version):
    """.debug_abbrev and .debug_info: one CU with the runtime structs."""
    STR, DATA1, UDATA, REF4, ADDR, EXPRLOC = 0x08, 0x0b, 0x0f, 0x13, 0x01, 0x18
    abbrevs = {
        1: (0x11, 1, [(0x03, STR), (0x13, DATA1)]),
        2: (0x24, 0, [(0x03, STR), (0x3e, DATA1), (0x0b, UDATA)]),
        3: (0x13, 1, [(0x03, STR), (0x0b, UDATA)]),
        4: (0x0d, 0, [(0x03, STR), (0x38, UDATA), (0x49, REF4)]),
        5: (0x16, 0, [(0x03, STR), (0x49, REF4)]),
        6: (0x16, 0, [(0x03, STR), (0x49, REF4), (0x2904, ADDR)]),
        7: (0x0f, 0, [(0x03, STR), (0x49, REF4)]),
        8: (0x34, 0, [(0x03, STR), (0x02, EXPRLOC), (0x49, REF4)]),
        9: (0x13, 1, [(0x03, STR), (0x0b, UDATA), (0x2904, ADDR)]),
    }
    ab = bytearray()
    for code, (tag, children, attrs) in abbrevs.items():
        ab += uvarint(code) + uvarint(tag) + bytes([children])
        for a, f in attrs:
            ab += uvarint(a) + uvarint(f)
        ab += b'\0\0'
    ab += b'\0'

    dies = []  # (key, abbrev, [values], children?)

    def base(name, size, enc=7):
        dies.append((name, 2, [name, ('data1', enc), size]))

    def struct_(name, size, members, key=None, rtype=None):
        if rtype is None:
            dies.append((key or name, 3, [name, size]))
        else:
            dies.append((key or name, 9, [name, size, ('addr', rtype)]))
        for mname, off, typ in members:
            dies.append((None, 4, [mname, off, ('ref', typ)]))
        dies.append((None, 0, []))

    def ptr(name, to):
        dies.append((name, 7, [name, ('ref', to)]))

    def typedef(name, to, rtype=None):
        if rtype is None:
            dies.append((name, 5, [name, ('ref', to)]))
        else:
            dies.append((name, 6, [name, ('ref', to), ('addr', rtype)]))

    def var(name, addr, typ):
        dies.append((name + '#var', 8, [name, ('loc', addr), ('ref', typ)]))

    by_size = {1: 'uint8', 2: 'uint16', 4: 'uint32', 8: 'uintptr',
               16: 'runtime.stack', 24: '[]*runtime.mspan'}
    for n, sz in (('uint8', 1), ('uint16', 2), ('uint32', 4),
                  ('uintptr', 8)):
        base(n, sz)
    base('int', 8, 5)
    typedef('runtime.spanClass', 'uint8')
    typedef('internal/abi.TFlag', 'uint8')
    typedef('internal/abi.NameOff', 'int32x')
    base('int32x', 4, 5)
    struct_('runtime.stack', 16, [('lo', 0, 'uintptr'), ('hi', 8, 'uintptr')])
    for pname, to in (('*runtime.mspan', 'runtime.mspan'),
                      ('*runtime.g', 'runtime.g'), ('*runtime.m', 'runtime.m'),
                      ('*runtime.moduledata', 'runtime.moduledata'),
                      ('*main.Node', 'main.Node#struct'), ('*uint8', 'uint8')):
        ptr(pname, to)
    for sname, elem in (('[]*runtime.mspan', '*runtime.mspan'),
                        ('[]runtime.addrRange', 'runtime.addrRange'),
                        ('[]*runtime.g', '*runtime.g')):
        struct_(sname, 24, [('array', 0, '*uint8'), ('len', 8, 'int'),
                            ('cap', 16, 'int')])

    def members(prefix, names, special=None):
        out, end = [], 8
        for field, mname in names:
            off, size = L[field]
            if off is None:
                continue
            typ = (special or {}).get(mname) or by_size.get(size, 'uintptr')
            out.append((mname, off, typ))
            end = max(end, off + size)
        return out, (end + 7) & ~7

    m, sz = members('mspan', [
        ('mspan_start_addr', 'startAddr'), ('mspan_npages', 'npages'),
        ('mspan_freeindex', 'freeindex'), ('mspan_nelems', 'nelems'),
        ('mspan_alloc_bits', 'allocBits'), ('mspan_gcmark_bits', 'gcmarkBits'),
        ('mspan_spanclass', 'spanclass'), ('mspan_state', 'state'),
        ('mspan_elemsize', 'elemsize'), ('mspan_large_type', 'largeType')],
        {'spanclass': 'runtime.spanClass', 'allocBits': '*uint8',
         'gcmarkBits': '*uint8'})
    struct_('runtime.mspan', sz, m)
    m, sz = members('g', [('g_stack', 'stack'), ('g_m', 'm'),
                          ('g_goid', 'goid')], {'m': '*runtime.m'})
    struct_('runtime.g', sz, m)
    m, sz = members('m', [('m_procid', 'procid'), ('m_curg', 'curg')],
                    {'curg': '*runtime.g'})
    struct_('runtime.m', sz, m)
    struct_('runtime.addrRange', 16,
            [('base', L['addr_range_base'][0], 'uintptr'), ('limit', 8, 'uintptr')])
    struct_('runtime.addrRanges', 48, [('ranges', 0, '[]runtime.addrRange')])
    r = L['mheap_pages_inuse_ranges'][0]
    struct_('runtime.pageAlloc', r - 8 + 48, [('inUse', r - 8, 'runtime.addrRanges')])
    a = L['mheap_allspans'][0]
    struct_('runtime.mheap', max(a, r) + 64,
            [('pages', 8, 'runtime.pageAlloc'), ('allspans', a, '[]*runtime.mspan')])
    m, sz = members('moduledata', [
        ('moduledata_text', 'text'), ('moduledata_types', 'types'),
        ('moduledata_etypes', 'etypes'), ('moduledata_next', 'next')],
        {'next': '*runtime.moduledata'})
    struct_('runtime.moduledata', sz, m)
    m, sz = members('abi', [
        ('abi_type_size', 'Size_'), ('abi_type_ptrbytes', 'PtrBytes'),
        ('abi_type_tflag', 'TFlag'), ('abi_type_str', 'Str')],
        {'TFlag': 'internal/abi.TFlag', 'Str': 'internal/abi.NameOff'})
    struct_('internal/abi.Type', 48, m)
    # A named struct carries its descriptor's offset; so may a typedef.
    struct_('main.Node', 56, [('next', 0, '*main.Node'), ('val', 8, 'uintptr'),
                              ('pad', 16, 'runtime.stack')], key='main.Node#struct',
            rtype=node_type_off)
    typedef('main.NodeAlias', 'main.Node#struct', node_type_off + 48)
    var('runtime.mheap_', addrs['runtime.mheap_'], 'runtime.mheap')
    var('runtime.allgs', addrs['runtime.allgs'], '[]*runtime.g')
    var('runtime.firstmoduledata', addrs['runtime.firstmoduledata'],
        'runtime.moduledata')

    hdr_len = 11 if version == 4 else 12

    def encode(offsets):
        out = bytearray()
        out += uvarint(1) + b'go.runtime\0' + bytes([0x16])
        for key, code, vals in dies:
            if key is not None:
                offsets[key] = hdr_len + len(out)
            out += uvarint(code)
            for v in vals:
                if isinstance(v, str):
                    out += v.encode() + b'\0'
                elif isinstance(v, tuple) and v[0] == 'ref':
                    out += struct.pack('<I', offsets.get(v[1], 0))
                elif isinstance(v, tuple) and v[0] == 'addr':
                    out += struct.pack('<Q', v[1])
                elif isinstance(v, tuple) and v[0] == 'loc':
                    out += uvarint(9) + b'\x03' + struct.pack('<Q', v[1])
                elif isinstance(v, tuple) and v[0] == 'data1':
                    out += bytes([v[1]])
                else:
                    out += uvarint(v)
        out += b'\0'
        return out

    offsets = {}
    encode(offsets)
    body = encode(offsets)
    if version == 4:
        cu = struct.pack('<HIB', 4, 0, 8)
    else:
        cu = struct.pack('<HBBI', 5, 1, 8, 0)
    info = struct.pack('<I', len(cu) + len(body)) + cu + body
    return bytes(ab), info


def synth_elf(gd, v, pie=False, strip=False, no_shdr=False, pcln_fmt=120,
              old_buildinfo=False, dwarf_version=None, dwarf_patch=None):
    minor = int(v.split('.')[1])
    L = layout_of(minor)
    DL = dict(L, **(dwarf_patch or {}))
    real = gobin(gd, 'allocloop-go' + v)
    _, blob = real.section('.go.buildinfo')
    if dwarf_version is None:
        dwarf_version = 5 if minor >= 25 else 4

    def build(sym):
        """All section contents for symbol addresses sym."""
        text, funcs = bytearray(), []
        for name, body, lea, fid in FUNCS:
            entry = sym['runtime.text'] + len(text)
            if body is None:
                code = b'\xc3'
            elif fid:
                code = b'\xe9' + rel(entry + 5, sym.get(name + '#code', 0))
            else:
                code = go_func(entry, body, sym, lea)
            funcs.append((name, entry, len(code), fid))
            text += code + b'\xcc' * (-len(code) % 32)
        # Types: names, then descriptors (abi.Type, 48 bytes).
        types = bytearray(8)  # nameOff 0 means "no name"
        name_off = {}
        for n in ('*main.Node', '*uint8', '*[]uint8'):
            name_off[n] = len(types)
            types += bytes([3]) + uvarint(len(n)) + n.encode()
        types += b'\0' * (-len(types) % 8)
        descs = {}
        for n, size, ptrb, tflag, kind, nm in (
                ('main.Node', 56, 8, 7, 25, '*main.Node'),
                ('*main.Node', 8, 8, 8, 54, '*main.Node'),
                ('uint8', 1, 0, 15, 8, '*uint8'),
                ('[]uint8', 24, 8, 2, 23, '*[]uint8')):
            descs[n] = len(types)
            types += struct.pack('<QQIBBBBQQii', size, ptrb, 0x1234, tflag, 8,
                                 8, kind, 0, 0, name_off[nm], 0)
        typelink = b''.join(struct.pack('<i', o) for o in descs.values())
        # pclntab
        tstart = sym['runtime.text']
        pf = []
        for name, entry, size, fid in funcs:
            pf.append(dict(name=name, entry=entry if pcln_fmt == 116
                           else entry - tstart, pcsp=pcsp_for(size),
                           funcid=fid, args=24))
        end = tstart + len(text)
        pcln = build_pclntab(pf, end if pcln_fmt == 116 else end - tstart,
                             pcln_fmt, 0 if minor >= 26 else tstart)
        fn_off = u64(pcln, 8 + 8 * (2 if pcln_fmt == 116 else 3))
        # moduledata
        md = bytearray(L['moduledata_next'][0] + 16)
        struct.pack_into('<QQQQ', md, 0, sym['runtime.pclntab'],
                         sym['runtime.pclntab'] + fn_off, 8, 8)
        struct.pack_into('<QQ', md, L['moduledata_text'][0], tstart, end)
        struct.pack_into('<Q', md, L['moduledata_types'][0], sym['runtime.types'])
        struct.pack_into('<Q', md, L['moduledata_etypes'][0],
                         sym['runtime.types'] + len(types))
        # build info
        if old_buildinfo:
            b = sym['.go.buildinfo']
            ver = b'go1.%d.3' % minor
            mod = blob[blob.index(b'0w\xaf\x0c'):]
            mod = mod[:mod.index(b'\xf92C1') + 16]
            bi = bytearray(b'\xff Go buildinf:' + bytes([8, 0]))
            bi += struct.pack('<QQQQQQ', b + 32, b + 48, b + 64, len(ver),
                              b + 64 + len(ver), len(mod))
            bi += ver + mod
        else:
            bi = bytearray(blob)
        return dict(text=bytes(text), types=bytes(types), typelink=typelink,
                    pcln=pcln, md=bytes(md), bi=bytes(bi), funcs=funcs,
                    descs=descs)

    base = 0 if pie else 0x400000
    seg_base = [base, base + 0x80000, base + 0x100000]
    sym = {'runtime.text': 0, 'runtime.mheap_': 0, 'runtime.allgs': 0,
           'runtime.pclntab': 0, 'runtime.types': 0, '.go.buildinfo': 0,
           'runtime.morestack_noctxt': 0, 'runtime.mallocgc': 0,
           'runtime.(*mheap).alloc': 0}
    pcln_name = '.data.rel.ro.gopclntab' if pie else '.gopclntab'
    for _ in range(3):
        c = build(sym)
        # Sections: (name, segment, type, flags, data or NOBITS size, align)
        secs = [('.text', 0, 1, 6, c['text'], 32),
                ('.rodata', 1, 1, 2, c['types'], 32),
                ('.typelink', 1, 1, 2, c['typelink'], 32)]
        if not pie:
            secs.append((pcln_name, 1, 1, 2, c['pcln'], 32))
        secs += [('.go.buildinfo', 2, 1, 3, c['bi'], 16)]
        if pie:
            secs.append((pcln_name, 2, 1, 3, c['pcln'], 32))
        secs += [('.noptrdata', 2, 1, 3, c['md'], 32),
                 ('.bss', 2, 8, 3, 256, 32)]
        off, addr_of = 0x40 + 3 * 56, {}
        for name, seg, typ, flags, data, align in secs:
            off = (off + align - 1) & ~(align - 1)
            addr_of[name] = (seg_base[seg] + off, off)
            if typ != 8:
                off += len(data)
        new = dict(sym)
        new['runtime.text'] = addr_of['.text'][0]
        new['runtime.types'] = addr_of['.rodata'][0]
        new['runtime.pclntab'] = addr_of[pcln_name][0]
        new['.go.buildinfo'] = addr_of['.go.buildinfo'][0]
        new['runtime.firstmoduledata'] = addr_of['.noptrdata'][0]
        new['runtime.mheap_'] = addr_of['.bss'][0]
        new['runtime.allgs'] = addr_of['.bss'][0] + 128
        for name, entry, size, fid in c['funcs']:
            if not fid:
                new[name] = entry
                new[name + '#code'] = entry
        if new == sym:
            break
        sym = new
    alloc_end = off

    # Non-allocated sections.
    extra = []
    if not strip:
        ab, info = dwarf(DL, minor, sym, c['descs']['main.Node'],
                         dwarf_version)
        extra += [('.debug_abbrev', ab), ('.debug_info', info)]
        strtab, syms = bytearray(b'\0'), [b'\0' * 24]

        def add(name, value, size, info_, shndx):
            syms.append(struct.pack('<IBBHQQ', len(strtab), info_, 0, shndx,
                                    value, size))
            strtab.extend(name.encode() + b'\0')
        add('runtime.text', sym['runtime.text'], 0, 0x02, 1)
        for name, entry, size, fid in c['funcs']:
            add(name + ('.abi0' if fid else ''), entry, size, 0x12, 1)
        add('runtime.etext', sym['runtime.text'] + len(c['text']), 0, 0x02, 1)
        add('runtime.types', sym['runtime.types'], 0, 0x01, 2)
        add('runtime.etypes', sym['runtime.types'] + len(c['types']), 0, 0x01, 2)
        pidx = [s[0] for s in secs].index(pcln_name) + 1
        add('runtime.pclntab', sym['runtime.pclntab'], 0, 0x01, pidx)
        add('runtime.epclntab', sym['runtime.pclntab'] + len(c['pcln']), 0,
            0x01, pidx)
        nidx = [s[0] for s in secs].index('.noptrdata') + 1
        bidx = nidx + 1
        add('runtime.firstmoduledata', sym['runtime.firstmoduledata'],
            len(c['md']), 0x11, nidx)
        add('runtime.mheap_', sym['runtime.mheap_'], 128, 0x11, bidx)
        add('runtime.allgs', sym['runtime.allgs'], 24, 0x11, bidx)
        extra += [('.symtab', b''.join(syms)), ('.strtab', bytes(strtab))]

    out = bytearray(alloc_end)
    for name, seg, typ, flags, data, align in secs:
        if typ != 8:
            o = addr_of[name][1]
            out[o:o + len(data)] = data
    placed = []
    for name, data in extra:
        placed.append((name, len(out), len(data)))
        out += data
    shstr = bytearray(b'\0')
    names = {}
    for n in [s[0] for s in secs] + [e[0] for e in extra] + ['.shstrtab']:
        names[n] = len(shstr)
        shstr += n.encode() + b'\0'
    shstr_off = len(out)
    out += shstr
    out += b'\0' * (-len(out) % 8)
    shoff = len(out)
    shdrs = [b'\0' * 64]
    for name, seg, typ, flags, data, align in secs:
        a, o = addr_of[name]
        size = data if typ == 8 else len(data)
        shdrs.append(struct.pack('<IIQQQQIIQQ', names[name], typ, flags, a, o,
                                 size, 0, 0, align, 0))
    symtab_idx = len(shdrs) + [e[0] for e in extra].index('.symtab') \
        if not strip else 0
    for name, o, size in placed:
        typ, link, info_, ent = 1, 0, 0, 0
        if name == '.symtab':
            typ, link, info_, ent = 2, symtab_idx + 1, 1, 24
        elif name == '.strtab':
            typ = 3
        shdrs.append(struct.pack('<IIQQQQIIQQ', names[name], typ, 0, 0, o,
                                 size, link, info_, 1, ent))
    shdrs.append(struct.pack('<IIQQQQIIQQ', names['.shstrtab'], 3, 0, 0,
                             shstr_off, len(shstr), 0, 0, 1, 0))
    if not no_shdr:
        out += b''.join(shdrs)
    # Program headers: text (R X), rodata (R), data (R W, with .bss).
    ph = bytearray()
    for seg, flags in ((0, 5), (1, 4), (2, 6)):
        mine = [s for s in secs if s[1] == seg]
        lo = min(addr_of[s[0]][1] for s in mine)
        hi_file = max(addr_of[s[0]][1] + (0 if s[2] == 8 else len(s[4]))
                      for s in mine)
        hi_mem = max(addr_of[s[0]][1] + (s[4] if s[2] == 8 else len(s[4]))
                     for s in mine)
        ph += struct.pack('<IIQQQQQQ', 1, flags, lo, seg_base[seg] + lo,
                          seg_base[seg] + lo, hi_file - lo, hi_mem - lo, 0x1000)
    eh = b'\x7fELF\x02\x01\x01' + b'\0' * 9
    eh += struct.pack('<HHIQQQIHHHHHH', 3 if pie else 2, 62, 1,
                      sym['main.main'], 64, 0 if no_shdr else shoff, 0, 64, 56,
                      3, 64, 0 if no_shdr else len(shdrs),
                      0 if no_shdr else len(shdrs) - 1)
    out[0:64] = eh
    out[64:64 + len(ph)] = ph
    return bytes(out)


def seeds_elf(gd):
    variants = [
        ('go1.21', '1.21', {}),
        ('go1.23-stripped', '1.23', dict(strip=True)),
        ('go1.24-pie', '1.24', dict(pie=True)),
        ('go1.25-stripped-pie', '1.25', dict(pie=True, strip=True)),
        ('go1.26-no-shdr', '1.26', dict(strip=True, no_shdr=True)),
        ('go1.27', '1.27', {}),
        ('go1.22-pcln118', '1.22', dict(pcln_fmt=118, strip=True)),
        ('go1.21-pcln116-oldinfo', '1.21', dict(pcln_fmt=116,
                                                old_buildinfo=True)),
    ]
    for name, v, kw in variants:
        save('elf', name, synth_elf(gd, v, **kw))
    for name, v, kw in (('go1.21-dwarf4', '1.21', {}),
                        ('go1.23-pie-dwarf4', '1.23', dict(pie=True)),
                        ('go1.26-dwarf5', '1.26', {}),
                        ('go1.27-dwarf4', '1.27', dict(dwarf_version=4))):
        save('dwarf', name, synth_elf(gd, v, **kw))


# ---- traces ----------------------------------------------------------------

def batches(data):
    """(start, end, gen) of each batch of a trace file."""
    p, out = 16, []
    while p < len(data):
        start = p
        p += 2 if data[p] == 49 else 1
        gen, p = read_uvarint(data, p)
        _, p = read_uvarint(data, p)
        _, p = read_uvarint(data, p)
        n, p = read_uvarint(data, p)
        p += n
        out.append((start, p, gen))
    return out


def seeds_trace(files, limit=24 * 1024):
    for i, path in enumerate(files):
        data = open(path, 'rb').read()
        bs = batches(data)
        # The first batches (header, side batches, events), whole.
        cut = 16
        for s, e, g in bs:
            if e > limit:
                break
            cut = e
        save('trace_decode', 'run%d-head' % i, data[:cut])
        # Batches of the last generation, without the header.
        last = [b for b in bs if b[2] == bs[-1][2]]
        body = b''
        for s, e, g in last:
            if len(body) + e - s > limit:
                break
            body += data[s:e]
        save('trace_decode', 'run%d-lastgen' % i, body)


def seeds_trace_writer():
    def ty(addr, size, ptr, name):
        return (bytes([0, addr]) + struct.pack('<IIH', size, ptr, len(name)) +
                name)

    def ev(op, thread, kind, step, a, b, c):
        return bytes([op, thread, kind - 127]) + struct.pack('<H', step) + \
            struct.pack('<H', a) + bytes([b]) + struct.pack('<I', c)
    hdr = bytes([0]) + struct.pack('<I', 1000) + struct.pack('<H', 3)
    s1 = hdr + ty(1, 56, 8, b'main.Node') + ty(2, 1, 0, b'uint8')
    for k in range(128, 137):
        s1 += ev(0x20, k % 3, k, 100, 7 * k, 1, 3)
    save('trace_writer', 'all-kinds', s1)
    s2 = hdr + ty(9, 24, 8, b'x' * 4100) + ty(0, 0, 0, b'') + \
        ev(0x20, 0xff, 132, 5, 1, 1, 0) + ev(0x20, 1, 137, 5, 1, 1, 0) + \
        ev(0x20, 1, 132, 5, 1, 7, 0) + ev(0xf0, 2, 132, 3, 9, 1, 0) + \
        b'\x10\x00'
    save('trace_writer', 'long-name-refusals-burst', s2)
    s3 = hdr + ev(0x20, 4, 129, 0xf010, 1, 2, 3) + \
        ev(0x20, 4, 130, 0xfff0, 1, 0, 0) + ty(5, 8, 0, b'') + \
        ev(0x20, 0xf3, 131, 1, 2, 1, 0)
    save('trace_writer', 'time-goes-back', s3)


def regress(gd):
    """Inputs of test_fuzz_regress.c that are built, not found."""
    d = os.path.join(HERE, 'regress', 'dwarf')
    os.makedirs(d, exist_ok=True)
    # A 2-byte .gopclntab that ends the file, at a page boundary: reading
    # its 4-byte magic touches the page after the file's mapping.
    e = bytearray(synth_elf(gd, '1.24', strip=True))
    e += b'\0' * (-(len(e) + 2) % 4096) + b'\xf1\xff'
    shoff = u64(e, 0x28)
    shnum, shstrndx = struct.unpack_from('<HH', e, 0x3c)
    stro = u64(e, shoff + 64 * shstrndx + 24)
    ph = 64 + 56 * 1  # the read-only PT_LOAD
    p_off, p_vaddr = u64(e, ph + 8), u64(e, ph + 16)
    struct.pack_into('<QQ', e, ph + 32, len(e) - p_off, len(e) - p_off)
    for i in range(shnum):
        h = shoff + 64 * i
        if cstr(e, stro + u32(e, h)) == '.gopclntab':
            struct.pack_into('<QQQ', e, h + 16, p_vaddr + len(e) - 2 - p_off,
                             len(e) - 2, 2)
    with open(os.path.join(HERE, 'regress', 'elf', 'pclntab-2-bytes-at-eof'),
              'wb') as f:
        f.write(e)
    # mspan.npages at 2^31: an int32 of the layout would go negative.
    with open(os.path.join(d, 'member-offset-2-31'), 'wb') as f:
        f.write(synth_elf(gd, '1.23', dwarf_patch={
            'mspan_npages': (1 << 31, 8), 'g_goid': ((1 << 32) - 2, 8)}))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    gd = sys.argv[1]
    seeds_buildinfo(gd)
    seeds_pclntab(gd)
    seeds_disasm(gd)
    seeds_types(gd)
    seeds_elf(gd)
    seeds_trace_writer()
    regress(gd)
    if len(sys.argv) > 2:
        seeds_trace(sys.argv[2:])


if __name__ == '__main__':
    main()
