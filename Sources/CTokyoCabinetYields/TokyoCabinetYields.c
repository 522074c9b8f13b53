// See CTokyoCabinetYields.h. Every address read here is checked first against
// the segments the dynamic loader reports for the library, so a layout this
// code does not expect makes it give up, never read or write elsewhere.
#define _GNU_SOURCE
#include "CTokyoCabinetYields.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

// Both 64-bit: their relocations are Elf64_Rela.
#if defined(__x86_64__)
#define CABINET_JUMP_SLOT R_X86_64_JUMP_SLOT
#define CABINET_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define CABINET_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define CABINET_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

static atomic_long skipped_yields;

/// What Tokyo Cabinet's sched_yield calls reach: returns at once, as
/// sched_yield does when no other thread waits for the processor.
static int skip_yield(void) {
    atomic_fetch_add_explicit(&skipped_yields, 1, memory_order_relaxed);
    return 0;
}

long cabinet_tc_skipped_yields(void) {
    return atomic_load_explicit(&skipped_yields, memory_order_relaxed);
}

/// Whether [address, address + length) lies inside one segment of type
/// `type` of the object, with at least the permissions `flags`.
static int inside(const struct dl_phdr_info *info, ElfW(Word) type, uintptr_t address, size_t length, ElfW(Word) flags) {
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != type || (segment->p_flags & flags) != flags) continue;
        uintptr_t start = info->dlpi_addr + segment->p_vaddr;
        uintptr_t size = segment->p_memsz;
        if (address >= start && address - start <= size && length <= size - (address - start)) return 1;
    }
    return 0;
}

static int loaded(const struct dl_phdr_info *info, uintptr_t address, size_t length) {
    return inside(info, PT_LOAD, address, length, PF_R);
}

/// An address from the dynamic section: glibc relocates them in place on
/// x86-64 and AArch64, some other loaders do not.
static uintptr_t dynamic_address(const struct dl_phdr_info *info, ElfW(Addr) value) {
    return value < info->dlpi_addr ? info->dlpi_addr + value : value;
}

/// The dynamic section's tables this reads, each checked to lie in the object's segments.
typedef struct {
    uintptr_t plt, other, symbols, strings;
    size_t plt_size, other_size, strings_size;
} tables;

/// Whether relocation table [address, address + size) has a relocation of
/// `type` against symbol `name`; if so, its target through `target`. -1: the
/// table is not one read here.
static int find_relocation(const struct dl_phdr_info *info, const tables *t, uintptr_t address, size_t size,
                           unsigned type, const char *name, uintptr_t *target) {
    if (address == 0) return 0;
    if (size % sizeof(ElfW(Rela)) != 0 || !loaded(info, address, size)) return -1;
    size_t name_size = strlen(name) + 1;   // with its terminating zero: a whole name, not a prefix
    const ElfW(Rela) *relocation = (const ElfW(Rela) *)address;
    for (size_t i = 0; i < size / sizeof(ElfW(Rela)); i++, relocation++) {
        if (ELF64_R_TYPE(relocation->r_info) != type) continue;
        size_t index = ELF64_R_SYM(relocation->r_info);
        if (index > (UINTPTR_MAX - t->symbols) / sizeof(ElfW(Sym))) return -1;
        uintptr_t symbol_address = t->symbols + index * sizeof(ElfW(Sym));
        if (!loaded(info, symbol_address, sizeof(ElfW(Sym)))) return -1;
        const ElfW(Sym) *symbol = (const ElfW(Sym) *)symbol_address;
        if (symbol->st_name >= t->strings_size || t->strings_size - symbol->st_name < name_size) continue;
        if (memcmp((const char *)t->strings + symbol->st_name, name, name_size) != 0) continue;
        *target = info->dlpi_addr + relocation->r_offset;
        return 1;
    }
    return 0;
}

/// The object's import slot (its PLT's GOT entry) for `name`, through
/// `slot`: CABINET_TC_YIELDS_SKIPPED when found, NONE when the object imports
/// no such function, UNSUPPORTED when its layout is not one read here, the
/// slot is read-only after loading, or the function is imported another way
/// (a GOT entry of its own, as `-fno-plt` builds do, bound at load and read-only).
static cabinet_tc_yields_status find_slot(const struct dl_phdr_info *info, const char *name, void ***slot) {
#ifndef CABINET_JUMP_SLOT
    (void)info; (void)name; (void)slot;
    return CABINET_TC_YIELDS_UNSUPPORTED;
#else
    const ElfW(Dyn) *dynamic = NULL;
    size_t dynamic_count = 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        dynamic = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        dynamic_count = info->dlpi_phdr[i].p_memsz / sizeof(ElfW(Dyn));
    }
    if (dynamic == NULL || !loaded(info, (uintptr_t)dynamic, dynamic_count * sizeof(ElfW(Dyn)))) return CABINET_TC_YIELDS_UNSUPPORTED;
    tables t = {0};
    size_t symbol_size = sizeof(ElfW(Sym)), relocation_size = sizeof(ElfW(Rela));
    ElfW(Sxword) plt_kind = DT_RELA;
    for (size_t i = 0; i < dynamic_count && dynamic[i].d_tag != DT_NULL; i++) {
        switch (dynamic[i].d_tag) {
        case DT_JMPREL: t.plt = dynamic_address(info, dynamic[i].d_un.d_ptr); break;
        case DT_PLTRELSZ: t.plt_size = dynamic[i].d_un.d_val; break;
        case DT_PLTREL: plt_kind = (ElfW(Sxword))dynamic[i].d_un.d_val; break;
        case DT_RELA: t.other = dynamic_address(info, dynamic[i].d_un.d_ptr); break;
        case DT_RELASZ: t.other_size = dynamic[i].d_un.d_val; break;
        case DT_RELAENT: relocation_size = dynamic[i].d_un.d_val; break;
        case DT_REL: return CABINET_TC_YIELDS_UNSUPPORTED;   // not used on x86-64 or AArch64
        case DT_SYMTAB: t.symbols = dynamic_address(info, dynamic[i].d_un.d_ptr); break;
        case DT_SYMENT: symbol_size = dynamic[i].d_un.d_val; break;
        case DT_STRTAB: t.strings = dynamic_address(info, dynamic[i].d_un.d_ptr); break;
        case DT_STRSZ: t.strings_size = dynamic[i].d_un.d_val; break;
        default: break;
        }
    }
    if (plt_kind != DT_RELA || symbol_size != sizeof(ElfW(Sym)) || relocation_size != sizeof(ElfW(Rela))
        || t.symbols == 0 || t.strings == 0 || t.strings_size == 0 || !loaded(info, t.strings, t.strings_size)) {
        return CABINET_TC_YIELDS_UNSUPPORTED;
    }
    uintptr_t address = 0;
    int found = find_relocation(info, &t, t.plt, t.plt_size, CABINET_JUMP_SLOT, name, &address);
    if (found < 0) return CABINET_TC_YIELDS_UNSUPPORTED;
    if (found == 0) {
        // Not through the PLT: imported through a GOT entry bound at load (left alone), or not at all.
        int other = find_relocation(info, &t, t.other, t.other_size, CABINET_GLOB_DAT, name, &address);
        return other == 0 ? CABINET_TC_YIELDS_NONE : CABINET_TC_YIELDS_UNSUPPORTED;
    }
    // Writable, aligned, and not in the part made read-only after relocation (full RELRO).
    if (address % sizeof(void *) != 0 || !inside(info, PT_LOAD, address, sizeof(void *), PF_W)
        || inside(info, PT_GNU_RELRO, address, 1, 0)) {
        return CABINET_TC_YIELDS_UNSUPPORTED;
    }
    *slot = (void **)address;
    return CABINET_TC_YIELDS_SKIPPED;
#endif
}

/// What a search of the loaded libtokyocabinet does with the slot it finds.
typedef enum { LOOK, SKIP, PUT_BACK } slot_change;

typedef struct {
    /// Where tchdbnew is: inside the library looked for.
    uintptr_t defined;
    const char *name;
    slot_change change;
    /// What the slot holds when the loader bound it: the function itself.
    void *original;
    cabinet_tc_yields_status status;
    /// -1 (no slot), 0 or 1: whether the slot points at skip_yield (PUT_BACK: whether it did and was put back).
    int skipped;
} search;

/// Points the slot at skip_yield by compare-and-swap, so that a binding the
/// loader makes meanwhile (another thread's first call through the stub) is
/// looked at again, not overwritten unseen.
static void skip_slot(const struct dl_phdr_info *info, search *found, void **slot, void *current) {
    for (int attempt = 0; attempt < 16; attempt++) {
        // Resolved already (the function itself), or not yet (the library's own lazy-binding stub).
        if (current != found->original && !inside(info, PT_LOAD, (uintptr_t)current, 1, PF_X)) break;
        if (__atomic_compare_exchange_n(slot, &current, (void *)skip_yield, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
            || current == (void *)skip_yield) {
            found->skipped = 1;
            return;
        }
    }
    found->status = CABINET_TC_YIELDS_CHANGED_ELSEWHERE;
}

static int visit(struct dl_phdr_info *info, size_t size, void *data) {
    search *found = data;
    if (size < offsetof(struct dl_phdr_info, dlpi_phnum) + sizeof(info->dlpi_phnum)) return 0;
    // A shared library of that name (never the program itself, whose slots all its code shares).
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, "libtokyocabinet") == NULL) return 0;
    if (!inside(info, PT_LOAD, found->defined, 1, PF_X)) return 0;
    void **slot = NULL;
    found->status = find_slot(info, found->name, &slot);
    if (found->status != CABINET_TC_YIELDS_SKIPPED) return 1;
    void *current = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    found->skipped = current == (void *)skip_yield;
    switch (found->change) {
    case LOOK:
        break;
    case SKIP:
        if (!found->skipped) skip_slot(info, found, slot, current);
        break;
    case PUT_BACK:
        found->skipped = found->skipped && found->original != NULL
            && __atomic_compare_exchange_n(slot, &current, found->original, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        break;
    }
    return 1;
}

/// Whether skip_yield is in the program itself (the first object the loader lists).
static int visit_program(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    *(int *)data = inside(info, PT_LOAD, (uintptr_t)skip_yield, 1, PF_X);
    return 1;
}

/// 1 once the code of skip_yield can never be unloaded, -1 if that cannot be had.
static atomic_int pinned;

/// Keeps the object holding skip_yield loaded for good: Tokyo Cabinet's slot
/// will point into it. The program itself is never unloaded; a shared library
/// holding this code (a plugin that links Cabinet) is opened once more with
/// RTLD_NODELETE, so a dlclose leaves it mapped.
static int pin_skip_yield(void) {
    int known = atomic_load(&pinned);
    if (known != 0) return known > 0;
    int in_program = 0;
    dl_iterate_phdr(visit_program, &in_program);
    int kept = in_program;
    Dl_info self;
    if (!kept && dladdr((void *)skip_yield, &self) && self.dli_fname != NULL) {
        kept = dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) != NULL;
    }
    atomic_store(&pinned, kept ? 1 : -1);
    return kept;
}

static search look(const char *name, slot_change change) {
    search found = {
        .defined = (uintptr_t)dlsym(RTLD_DEFAULT, "tchdbnew"),
        .name = name,
        .change = change,
        .original = dlsym(RTLD_DEFAULT, name),
        .status = CABINET_TC_YIELDS_NO_LIBRARY,
        .skipped = -1,
    };
    if (found.defined == 0) return found;
    if (change == SKIP && !pin_skip_yield()) {
        found.status = CABINET_TC_YIELDS_UNSUPPORTED;
        return found;
    }
    dl_iterate_phdr(visit, &found);
    return found;
}

cabinet_tc_yields_status cabinet_tc_skip_yields(void) {
    return look("sched_yield", SKIP).status;
}

int cabinet_tc_put_back_yields(void) {
    search found = look("sched_yield", PUT_BACK);
    return found.status == CABINET_TC_YIELDS_SKIPPED && found.skipped == 1;
}

int cabinet_tc_import_is_skipped(const char *import_name) {
    search found = look(import_name, LOOK);
    return found.status == CABINET_TC_YIELDS_SKIPPED ? found.skipped : -1;
}
