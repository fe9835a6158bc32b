// SPDX-License-Identifier: BSD-3-Clause
/*
 * go_binary.c - open a Go ELF executable: its sections, segments and
 * symbols, reads at link addresses, and the per-binary memo of facts
 * other modules derive; go_binary_tables.c finds its Go tables (build
 * info, pclntab, moduledata) in what the ELF kept.
 *
 * The Go linker writes pointers in place even in PIEs (the R_X86_64_RELATIVE
 * addend is the same value), so link-time pointers can be read from the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "go_binary.h"
#include "go_binary_impl.h"
#include "inspect/go_dwarf.h"
#include "inspect/go_func_index.h"

int go_binary_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

const struct section *go_binary_find_section(const struct go_binary *bin,
					      const char *name)
{
	size_t i;

	for (i = 0; i < bin->nsecs; i++)
		if (!strcmp(bin->secs[i].name, name))
			return &bin->secs[i];
	return NULL;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	/* Same name twice (local symbols): the lower address first. */
	if (c)
		return c;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

const struct symbol *go_binary_find_sym(const struct go_binary *bin,
					 const char *name)
{
	size_t lo = 0, hi = bin->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(bin->syms[mid].name, name);

		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < bin->nsyms && !strcmp(bin->syms[lo].name, name))
		return &bin->syms[lo];
	return NULL;
}

static int load_sections(struct go_binary *bin)
{
	size_t shstrndx, n = 0;
	Elf_Scn *scn = NULL;

	if (elf_getshdrnum(bin->elf, &n) || n == 0)
		return 0; /* section headers stripped: segments still work */
	if (elf_getshdrstrndx(bin->elf, &shstrndx))
		return 0;
	bin->secs = calloc(n, sizeof(*bin->secs));
	if (!bin->secs)
		return -ENOMEM;
	while ((scn = elf_nextscn(bin->elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		struct section *s;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(bin->elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		s = &bin->secs[bin->nsecs++];
		s->name = name;
		s->addr = sh.sh_addr;
		s->size = sh.sh_size;
		s->offset = sh.sh_offset;
		s->type = sh.sh_type;
		s->flags = sh.sh_flags;
		if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
			bin->has_dwarf = true;
	}
	return 0;
}

static int load_segments(struct go_binary *bin)
{
	size_t n, i;

	if (elf_getphdrnum(bin->elf, &n))
		return -EINVAL;
	bin->segs = calloc(n ? n : 1, sizeof(*bin->segs));
	if (!bin->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		struct segment *s;

		if (!gelf_getphdr(bin->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* A segment claiming bytes past the end of the file is bogus. */
		if (ph.p_offset > bin->image_len ||
		    ph.p_filesz > bin->image_len - ph.p_offset)
			return -EINVAL;
		s = &bin->segs[bin->nsegs++];
		s->vaddr = ph.p_vaddr;
		s->memsz = ph.p_memsz;
		s->offset = ph.p_offset;
		s->filesz = ph.p_filesz;
		s->flags = ph.p_flags;
	}
	return 0;
}

static int load_symtab(struct go_binary *bin)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(bin->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !sh.sh_entsize)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		bin->syms = calloc(n ? n : 1, sizeof(*bin->syms));
		if (!bin->syms)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			struct symbol *s;

			if (!gelf_getsym(data, i, &sym) ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(bin->elf, sh.sh_link, sym.st_name);
			if (!name || !name[0])
				continue;
			s = &bin->syms[bin->nsyms++];
			s->name = name;
			s->addr = sym.st_value;
			s->size = sym.st_size;
			s->type = GELF_ST_TYPE(sym.st_info);
		}
		qsort(bin->syms, bin->nsyms, sizeof(*bin->syms), cmp_sym);
		bin->has_symtab = bin->nsyms > 0;
		return 0;
	}
	return 0;
}

const uint8_t *go_binary_bytes(const struct go_binary *bin, uint64_t vaddr,
			       size_t len)
{
	size_t i;

	for (i = 0; i < bin->nsegs; i++) {
		const struct segment *s = &bin->segs[i];

		if (vaddr < s->vaddr || vaddr - s->vaddr > s->filesz ||
		    len > s->filesz - (vaddr - s->vaddr))
			continue;
		return bin->image + s->offset + (vaddr - s->vaddr);
	}
	return NULL;
}

int go_binary_read(const struct go_binary *bin, uint64_t vaddr, void *buf,
		   size_t len)
{
	const uint8_t *p = go_binary_bytes(bin, vaddr, len);

	if (!p)
		return -EFAULT;
	memcpy(buf, p, len);
	return 0;
}

int go_binary_read_u64(const struct go_binary *bin, uint64_t vaddr,
		       uint64_t *val)
{
	uint8_t b[8];
	int err = go_binary_read(bin, vaddr, b, sizeof(b)), i;

	if (err)
		return err;
	*val = 0;
	for (i = 7; i >= 0; i--)
		*val = *val << 8 | b[i];
	return 0;
}

int go_binary_vaddr_to_offset(const struct go_binary *bin, uint64_t vaddr,
			      uint64_t *off)
{
	const uint8_t *p = go_binary_bytes(bin, vaddr, 1);

	if (!p)
		return -EFAULT;
	*off = p - bin->image;
	return 0;
}

/* For messages: the GOARCH-like name of an ELF machine, or NULL. */
static const char *machine_name(unsigned m)
{
	switch (m) {
	case EM_386: return "i386";
	case EM_X86_64: return "x86-64";
	case EM_ARM: return "arm";
	case EM_AARCH64: return "aarch64";
	case EM_PPC64: return "ppc64";
	case EM_S390: return "s390x";
	case EM_MIPS: return "mips";
	case EM_RISCV: return "riscv64";
	case 258: return "loong64"; /* EM_LOONGARCH */
	}
	return NULL;
}

/* gccgo links against libgo and keeps no pclntab. */
static bool looks_gccgo(const struct go_binary *bin)
{
	Elf_Scn *scn = NULL;

	if (!strcmp(bin->bi.compiler, "gccgo") || go_binary_find_section(bin, ".go_export"))
		return true;
	while ((scn = elf_nextscn(bin->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && sh.sh_entsize &&
			    i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *lib;

			if (!gelf_getdyn(data, i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			lib = elf_strptr(bin->elf, sh.sh_link, dyn.d_un.d_val);
			if (lib && !strncmp(lib, "libgo.so", 8))
				return true;
		}
	}
	return false;
}

int go_binary_looks_go(int fd)
{
	size_t shstrndx, nsec = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int go = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0) {
		elf_end(elf);
		return -ENOEXEC;
	}
	while (!go && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		nsec++;
		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		go = name && (strcmp(name, ".go.buildinfo") == 0 ||
			      strcmp(name, ".gopclntab") == 0);
	}
	elf_end(elf);
	return go || nsec == 0;
}

int go_binary_open(const char *path, struct go_binary **out, char *err,
		   size_t errlen)
{
	struct go_binary *bin;
	GElf_Ehdr eh;
	int rc, bi_rc, pc_rc;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (elf_version(EV_CURRENT) == EV_NONE)
		return go_binary_fail(err, errlen, -EINVAL, "libelf: %s", elf_errmsg(-1));
	bin = calloc(1, sizeof(*bin));
	if (!bin)
		return -ENOMEM;
	bin->fd = -1;
	bin->bi.cgo = -1;
	bin->path = strdup(path);
	bin->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!bin->path || bin->fd < 0) {
		rc = go_binary_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
		goto out_close;
	}
	bin->elf = elf_begin(bin->fd, ELF_C_READ_MMAP, NULL);
	if (!bin->elf || elf_kind(bin->elf) != ELF_K_ELF) {
		rc = go_binary_fail(err, errlen, -ENOEXEC, "%s: not an ELF file", path);
		goto out_close;
	}
	bin->image = (const uint8_t *)elf_rawfile(bin->elf, &bin->image_len);
	if (!bin->image || !gelf_getehdr(bin->elf, &eh)) {
		rc = go_binary_fail(err, errlen, -ENOEXEC, "%s: unreadable ELF: %s", path,
			  elf_errmsg(-1));
		goto out_close;
	}
	if (gelf_getclass(bin->elf) != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64) {
		const char *arch = machine_name(eh.e_machine);

		rc = go_binary_fail(err, errlen, -ENOEXEC,
			  "%s: built for %s (%d-bit ELF, machine %u), not "
			  "x86-64; only amd64 programs can be traced", path,
			  arch ? arch : "another architecture",
			  gelf_getclass(bin->elf) == ELFCLASS64 ? 64 : 32,
			  eh.e_machine);
		goto out_close;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		rc = go_binary_fail(err, errlen, -ENOEXEC,
			  "%s: ELF type %u, not an executable", path, eh.e_type);
		goto out_close;
	}
	bin->pie = eh.e_type == ET_DYN;

	rc = load_segments(bin);
	if (!rc)
		rc = load_sections(bin);
	if (!rc)
		rc = load_symtab(bin);
	if (rc) {
		go_binary_fail(err, errlen, rc, "%s: malformed ELF headers", path);
		goto out_close;
	}

	bi_rc = go_binary_load_buildinfo(bin);
	if (bi_rc == -ENOMEM) {
		rc = -ENOMEM;
		goto out_close;
	}
	if (looks_gccgo(bin)) {
		rc = go_binary_fail(err, errlen, -ENOTSUP,
			  "%s: built by gccgo; only binaries of the gc toolchain "
			  "are supported", path);
		goto out_close;
	}
	pc_rc = go_binary_load_pclntab(bin, err, errlen);
	if (pc_rc == -ENOENT && bi_rc) {
		rc = go_binary_fail(err, errlen, -ENOEXEC,
			  "%s: not a Go binary (no Go build info, no pclntab)",
			  path);
		goto out_close;
	}
	if (pc_rc == -ENOENT) {
		rc = go_binary_fail(err, errlen, -ENOEXEC,
			  "%s: %s binary without a function table (pclntab; "
			  "packed?): its runtime functions cannot be found",
			  path, bin->bi.version);
		goto out_close;
	}
	if (pc_rc) {
		rc = pc_rc;
		goto out_close;
	}
	rc = go_func_index_build(&bin->fidx, &bin->pcln);
	if (rc)
		goto out_close;
	*out = bin;
	return 0;

out_close:
	go_binary_close(bin);
	return rc;
}

int go_binary_check_version(const struct go_binary *bin, char *err,
			    size_t errlen)
{
	const struct go_build_info *bi = &bin->bi;

	if (bi->major == 0)
		return go_binary_fail(err, errlen, -ENOTSUP,
			    "no Go version in the binary (build info missing "
			    "or damaged); Go 1.%d or newer is required",
			    GO_MIN_SUPPORTED_MINOR);
	if (!go_build_info_at_least(bi, 1, GO_MIN_SUPPORTED_MINOR))
		return go_binary_fail(err, errlen, -ENOTSUP,
			    "built with %s; Go 1.%d or newer is required",
			    bi->version, GO_MIN_SUPPORTED_MINOR);
	return 0;
}

void go_binary_close(struct go_binary *bin)
{
	if (!bin)
		return;
	go_dwarf_free(bin->dwarf);
	go_func_index_free(&bin->fidx);
	go_build_info_free(&bin->bi);
	if (bin->elf)
		elf_end(bin->elf);
	if (bin->fd >= 0)
		close(bin->fd);
	free(bin->secs);
	free(bin->segs);
	free(bin->syms);
	free(bin->path);
	free(bin);
}

int go_binary_fd(const struct go_binary *bin)
{
	return bin->fd;
}

const char *go_binary_path(const struct go_binary *bin)
{
	return bin->path;
}

const struct go_build_info *go_binary_build_info(const struct go_binary *bin)
{
	return &bin->bi;
}

bool go_binary_is_pie(const struct go_binary *bin)
{
	return bin->pie;
}

bool go_binary_has_symtab(const struct go_binary *bin)
{
	return bin->has_symtab;
}

bool go_binary_has_dwarf(const struct go_binary *bin)
{
	return bin->has_dwarf;
}

/* go_pclntab_find through the name index (go_func_index.h on why). */
static int pcln_find(const struct go_binary *bin, const char *name,
		     struct go_func *f)
{
	int rc = go_func_index_find(&bin->fidx, &bin->pcln, name, f);

	return rc == -EAGAIN ? go_pclntab_find(&bin->pcln, name, f) : rc;
}

int go_binary_find_func(const struct go_binary *bin, const char *name,
			uint64_t *entry, uint64_t *size)
{
	const struct symbol *sym;
	struct go_func f;

	/*
	 * The runtime's own function table first: every Go binary has it,
	 * the runtime itself unwinds with it, so it cannot be wrong without
	 * the program failing, while .symtab is only read by tools and may
	 * be damaged or edited without the program noticing.
	 */
	if (pcln_find(bin, name, &f) == 0) {
		*entry = f.entry;
		*size = f.size;
		return 0;
	}
	sym = go_binary_find_sym(bin, name);
	if (!sym || sym->type != STT_FUNC)
		return -ENOENT;
	*entry = sym->addr;
	*size = sym->size;
	return 0;
}

int go_binary_foreach_func(const struct go_binary *bin, const char *prefix,
			   go_func_cb cb, void *arg)
{
	size_t plen = prefix ? strlen(prefix) : 0;
	uint64_t i;

	for (i = 0; i < bin->pcln.nfunc; i++) {
		struct go_func f;
		int rc;

		if (go_pclntab_func(&bin->pcln, i, &f))
			continue;
		if (plen && strncmp(f.name, prefix, plen))
			continue;
		/* The ABI wrapper twin of a function listed under its name. */
		if (f.funcid != 0) {
			struct go_func code;

			if (pcln_find(bin, f.name, &code) == 0 &&
			    code.entry != f.entry)
				continue;
		}
		rc = cb(f.name, f.entry, f.size, arg);
		if (rc)
			return rc;
	}
	return 0;
}

int go_binary_find_symbol(const struct go_binary *bin, const char *name,
			  uint64_t *addr, uint64_t *size)
{
	const struct symbol *sym = go_binary_find_sym(bin, name);

	if (!sym)
		return -ENOENT;
	*addr = sym->addr;
	if (size)
		*size = sym->size;
	return 0;
}

int go_binary_section(const struct go_binary *bin, const char *name,
		      uint64_t *addr, uint64_t *size)
{
	const struct section *s = go_binary_find_section(bin, name);

	if (!s)
		return -ENOENT;
	*addr = s->addr;
	*size = s->size;
	return 0;
}

int go_binary_first_load(const struct go_binary *bin, uint64_t *vaddr,
			 uint64_t *offset)
{
	if (!bin->nsegs)
		return -ENOENT;
	/* load_segments keeps PT_LOADs in file order, which is ascending. */
	*vaddr = bin->segs[0].vaddr;
	*offset = bin->segs[0].offset;
	return 0;
}

const struct go_pclntab *go_binary_pclntab(const struct go_binary *bin)
{
	return &bin->pcln;
}

uint64_t go_binary_text_start(const struct go_binary *bin)
{
	return bin->text_start;
}

int go_binary_moduledata(const struct go_binary *bin, uint64_t *addr)
{
	if (!bin->moduledata)
		return -ENOENT;
	*addr = bin->moduledata;
	return 0;
}

/*
 * moduledata.gofunc (runtime/symtab.go): after pcHeader, six slices and
 * 21 words up to Go 1.26; Go 1.27 added typedesclen, itaboffset and
 * itabsize before it.
 */
int go_binary_gofunc(const struct go_binary *bin, uint64_t *addr)
{
	const struct go_build_info *bi = go_binary_build_info(bin);
	uint64_t v;

	if (!bin->moduledata || !bi ||
	    go_binary_read_u64(bin, bin->moduledata +
			       (bi->minor >= 27 ? 344 : 320), &v) ||
	    !go_binary_bytes(bin, v, 1))
		return -ENOENT;
	*addr = v;
	return 0;
}

struct Elf *go_binary_elf(const struct go_binary *bin)
{
	return bin->elf;
}

bool go_binary_memo_get(const struct go_binary *bin, const char *key,
			uint64_t *value, int *rc)
{
	size_t i;

	for (i = 0; i < bin->nmemo; i++) {
		if (!strcmp(bin->memo[i].key, key)) {
			*value = bin->memo[i].value;
			*rc = bin->memo[i].rc;
			return true;
		}
	}
	return false;
}

void go_binary_memo_put(const struct go_binary *bin, const char *key,
			uint64_t value, int rc)
{
	/* A cache of facts of the file, which does not change. */
	struct go_binary *b = (struct go_binary *)bin;
	struct go_binary_memo *m;

	if (b->nmemo >= sizeof(b->memo) / sizeof(b->memo[0]) ||
	    strlen(key) >= sizeof(m->key))
		return;
	m = &b->memo[b->nmemo++];
	snprintf(m->key, sizeof(m->key), "%s", key);
	m->value = value;
	m->rc = rc;
}

struct go_dwarf *go_binary_dwarf(const struct go_binary *bin)
{
	struct go_binary *b = (struct go_binary *)bin;

	/* A cache filled on first use; the binary itself does not change. */
	if (!b->dwarf)
		b->dwarf = go_dwarf_open(b->has_dwarf ? (struct Elf *)b->elf : NULL);
	return b->dwarf;
}
