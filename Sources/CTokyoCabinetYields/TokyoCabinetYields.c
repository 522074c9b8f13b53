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
#elif defined(__aarch64__)
#define CABINET_JUMP_SLOT R_AARCH64_JUMP_SLOT
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
    return inside(info, PT_LOAD, address, length, 0);
}

/// An address from the dynamic section: glibc relocates them in place on
/// x86-64 and AArch64, some other loaders do not.
static uintptr_t dynamic_address(const struct dl_phdr_info *info, ElfW(Addr) value) {
    return value < info->dlpi_addr ? info->dlpi_addr + value : value;
}

/// The object's import slot (its PLT's GOT entry) for `name`, through
/// `slot`: CABINET_TC_YIELDS_SKIPPED when found, NONE when the object imports
/// no such function, UNSUPPORTED when its layout is not one read here or the
/// slot is read-only after loading.
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
    uintptr_t relocations = 0, symbols = 0, strings = 0;
    size_t relocations_size = 0, strings_size = 0, symbol_size = sizeof(ElfW(Sym));
    ElfW(Sxword) relocation_kind = -1;
    for (size_t i = 0; i < dynamic_count && dynamic[i].d_tag != DT_NULL; i++) {
        switch (dynamic[i].d_tag) {
        case DT_JMPREL: relocations = dynamic_address(info, dynamic[i].d_un.d_ptr); break;
        case DT_PLTRELSZ: relocations_size = dynamic[i].d_un.d_val; break;
        case DT_PLTREL: relocation_kind = (ElfW(Sxword))dynamic[i].d_un.d_val; break;
        case DT_SYMTAB: symbols = dynamic_address(info, dynamic[i].d_un.d_ptr); break;
        case DT_SYMENT: symbol_size = dynamic[i].d_un.d_val; break;
        case DT_STRTAB: strings = dynamic_address(info, dynamic[i].d_un.d_ptr); break;
        case DT_STRSZ: strings_size = dynamic[i].d_un.d_val; break;
        default: break;
        }
    }
    if (relocations == 0) return CABINET_TC_YIELDS_NONE;   // no PLT: it imports nothing lazily
    if (relocation_kind != DT_RELA || symbol_size != sizeof(ElfW(Sym)) || symbols == 0 || strings == 0
        || relocations_size % sizeof(ElfW(Rela)) != 0 || !loaded(info, relocations, relocations_size)
        || !loaded(info, strings, strings_size)) {
        return CABINET_TC_YIELDS_UNSUPPORTED;
    }
    size_t name_size = strlen(name) + 1;   // with its terminating zero: a whole name, not a prefix
    const ElfW(Rela) *relocation = (const ElfW(Rela) *)relocations;
    for (size_t i = 0; i < relocations_size / sizeof(ElfW(Rela)); i++, relocation++) {
        if (ELF64_R_TYPE(relocation->r_info) != CABINET_JUMP_SLOT) continue;
        size_t index = ELF64_R_SYM(relocation->r_info);
        if (index > (UINTPTR_MAX - symbols) / sizeof(ElfW(Sym))) return CABINET_TC_YIELDS_UNSUPPORTED;
        uintptr_t symbol_address = symbols + index * sizeof(ElfW(Sym));
        if (!loaded(info, symbol_address, sizeof(ElfW(Sym)))) return CABINET_TC_YIELDS_UNSUPPORTED;
        const ElfW(Sym) *symbol = (const ElfW(Sym) *)symbol_address;
        if (symbol->st_name >= strings_size || strings_size - symbol->st_name < name_size) continue;
        if (memcmp((const char *)strings + symbol->st_name, name, name_size) != 0) continue;
        uintptr_t address = info->dlpi_addr + relocation->r_offset;
        // Writable, aligned, and not in the part made read-only after relocation (full RELRO).
        if (address % sizeof(void *) != 0 || !inside(info, PT_LOAD, address, sizeof(void *), PF_W)
            || inside(info, PT_GNU_RELRO, address, 1, 0)) {
            return CABINET_TC_YIELDS_UNSUPPORTED;
        }
        *slot = (void **)address;
        return CABINET_TC_YIELDS_SKIPPED;
    }
    return CABINET_TC_YIELDS_NONE;
#endif
}

typedef struct {
    /// Where tchdbnew is: inside the library looked for.
    uintptr_t defined;
    const char *name;
    /// Whether to point the slot at skip_yield, and what it may hold before.
    int change;
    void *original;
    cabinet_tc_yields_status status;
    /// For cabinet_tc_import_is_skipped: -1 (no slot), 0 or 1.
    int skipped;
} search;

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
    if (!found->change || found->skipped) return 1;
    // Resolved already (the function itself), or not yet (the library's own lazy-binding stub).
    if (current != found->original && !inside(info, PT_LOAD, (uintptr_t)current, 1, PF_X)) {
        found->status = CABINET_TC_YIELDS_CHANGED_ELSEWHERE;
        return 1;
    }
    __atomic_store_n(slot, (void *)skip_yield, __ATOMIC_RELEASE);
    found->skipped = 1;
    return 1;
}

static search look(const char *name, int change) {
    search found = {
        .defined = (uintptr_t)dlsym(RTLD_DEFAULT, "tchdbnew"),
        .name = name,
        .change = change,
        .original = dlsym(RTLD_DEFAULT, name),
        .status = CABINET_TC_YIELDS_NO_LIBRARY,
        .skipped = -1,
    };
    if (found.defined != 0) dl_iterate_phdr(visit, &found);
    return found;
}

cabinet_tc_yields_status cabinet_tc_skip_yields(void) {
    return look("sched_yield", 1).status;
}

int cabinet_tc_import_is_skipped(const char *import_name) {
    search found = look(import_name, 0);
    return found.status == CABINET_TC_YIELDS_SKIPPED ? found.skipped : -1;
}
