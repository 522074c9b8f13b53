import CabinetStorage

/// Checks index files (`<storedName>.index`) against their classes' records.
///
/// Without the app's classes (``problems(in:format:)``, for `cabinet verify`):
/// the file is an ordered table; its catalog, row records and posting blocks
/// decode (a word's blocks in row order, every position readable); every
/// entry a row record lists is in the index and every entry in the index
/// (a full-text one: a row in a word's block) is listed by its row's record
/// (missing and extra entries); every row record's row holds an object. With them (``ObjectStore/verifyIndexes()``): besides,
/// every saved object's entries are the ones its values make (stale entries).
///
/// Memory stays bounded: entries are looked up one by one, not collected.
enum IndexVerifier {
    static let staleKind = StorageProblem.Kind(rawValue: "index-stale")
    static let damagedKind = StorageProblem.Kind(rawValue: "index-damaged")

    private static func problem(_ file: String, _ className: String, row: UInt32? = nil, _ reason: String) -> StorageProblem {
        StorageProblem(location: RecordLocation(file: file, className: className, rowID: row),
                       reason: reason + "; `cabinet reindex` rebuilds the index from the records", kind: damagedKind)
    }

    /// The problems of every index file in `backend`.
    static func problems(in backend: any StorageBackend, format: RecordFormat) throws -> [StorageProblem] {
        var problems: [StorageProblem] = []
        for name in try backend.tableNames() where name.hasSuffix(ClassIndexes.suffix) {
            let className = String(name.dropLast(ClassIndexes.suffix.count))
            let file = backend.location(ofTable: name)
            do {
                guard let table = try backend.openTable(named: name) as? any OrderedStorageTable else {
                    problems.append(problem(file, className, "an index file that is not a B+ tree database"))
                    continue
                }
                let classTable = try backend.hasTable(named: className) ? try backend.openTable(named: className) : nil
                problems += try check(table, classTable: classTable, className: className, format: format)
            } catch let error as CabinetError {
                problems.append(problem(error.location?.file ?? file, className, "\(error)"))
            }
        }
        return problems
    }

    /// The problems of one index file; `classTable` is its class's file (`nil`: there is none).
    static func check(_ table: any OrderedStorageTable, classTable: (any StorageTable)?, className: String,
                      format: RecordFormat) throws -> [StorageProblem] {
        var problems: [StorageProblem] = []
        let file = table.path
        let catalog: IndexCatalog?
        do {
            catalog = try IndexCatalog.read(from: table, format: format)
        } catch let error as CabinetError where error.code != .unsupportedFormat {
            return [problem(file, className, "its catalog is damaged: \(error)")]
        }
        // A file without a catalog is being built (or waits to be): the next open builds it.
        guard let catalog else { return try table.recordCount > 0 ? [problem(file, className, "an index file without a catalog (a build that did not finish)")] : [] }
        // An earlier layout is not damage: the next writable open builds the file again in this one.
        guard catalog.hasCurrentEntries else { return [] }
        let numbers = Set(catalog.indexes.map(\.number))
        let fullText = Set(catalog.indexes.filter { $0.kind == .fullText }.map(\.number))
        guard classTable != nil else { return [problem(file, className, "an index file whose class file is missing")] }
        // Each row record: its row is an object, its entries are in the index.
        var listed = 0
        let rowStart: [UInt8] = [IndexKeys.rowPrefix], rowEnd: [UInt8] = [IndexKeys.rowPrefix + 1]
        try rowStart.withUnsafeBytes { lower in
            try rowEnd.withUnsafeBytes { upper in
                try table.forEach(from: lower, to: upper, descending: false) { key, value in
                    guard key.count == 5 else {
                        problems.append(problem(file, className, "a row record whose key is \(key.count) bytes, not 5"))
                        return true
                    }
                    let row = UInt32(bigEndian: key.loadUnaligned(fromByteOffset: 1, as: UInt32.self))
                    let entries: RowEntries
                    do {
                        entries = try RowEntries.decode(value, format: format, location: RecordLocation(file: file, className: className, rowID: row))
                    } catch let error as CabinetError {
                        problems.append(problem(file, className, row: row, "its row record is damaged: \(error)"))
                        return true
                    }
                    if try classTable?.withValue(forRow: row, { _ in true }) == nil {
                        problems.append(problem(file, className, row: row, "index entries of a row that holds no object"))
                    }
                    for entry in entries.entries {
                        listed += 1
                        if !numbers.contains(entry.index) {
                            problems.append(problem(file, className, row: row, "an entry of index number \(entry.index), which the catalog does not name"))
                        }
                        let stored: [UInt8]?
                        if fullText.contains(entry.index) {
                            do {
                                stored = try PostingBlock.positions(index: entry.index, word: entry.entry.key, row: row, in: table)
                            } catch let damage as PostingBlock.Damage {
                                problems.append(problem(file, className, row: row, "a posting block of index \(entry.index) is damaged: \(damage)"))
                                continue
                            }
                        } else {
                            stored = try IndexKeys.entryKey(index: entry.index, value: entry.entry.key, row: row).withUnsafeBytes { key in
                                try table.withValue(forKey: key) { Array($0) }
                            }
                        }
                        if stored == nil {
                            problems.append(problem(file, className, row: row, "an entry its row record lists is missing from index \(entry.index)"))
                        } else if stored != entry.entry.value {
                            problems.append(problem(file, className, row: row, "an entry of index \(entry.index) holds other positions than its row record"))
                        }
                    }
                    return true
                }
            }
        }
        var rowRecords = 0
        try rowStart.withUnsafeBytes { lower in
            try rowEnd.withUnsafeBytes { upper in
                try table.forEach(from: lower, to: upper, descending: false) { _, _ in
                    rowRecords += 1
                    return true
                }
            }
        }
        // As many entries as the row records list, all present: none extra. Otherwise find them.
        // A full-text index's entries are the rows of its posting blocks, each block checked whole.
        var entryCount = 0, records = 0
        var lastBlock: (word: [UInt8], lastRow: UInt32)?
        let entryStart: [UInt8] = [IndexKeys.firstIndexNumber]
        try entryStart.withUnsafeBytes { lower in
            try table.forEach(from: lower, to: nil, descending: false) { key, value in
                records += 1
                // A damaged page can hold an empty key, which no entry has.
                guard let index = key.first else {
                    problems.append(problem(file, className, "an index entry with an empty key"))
                    return true
                }
                guard fullText.contains(index) else {
                    entryCount += 1
                    return true
                }
                guard key.count > 6, key[key.count - 5] == 0, let first = IndexKeys.row(ofEntry: key) else {
                    problems.append(problem(file, className, "a posting block of index \(key[0]) whose key does not end in a word and a row"))
                    return true
                }
                let word = Array(key[0..<(key.count - 4)])
                do {
                    var reader = try PostingBlock.Reader(value, firstRow: first)
                    if let lastBlock, lastBlock.word == word, lastBlock.lastRow >= first {
                        problems.append(problem(file, className, row: first, "posting blocks of index \(key[0]) that overlap"))
                    }
                    var last = first
                    while let member = try reader.next() {
                        entryCount += 1
                        last = member.row
                        if FullTextIndexing.decode(member.positions) == nil {
                            problems.append(problem(file, className, row: member.row, "a full-text entry of index \(key[0]) whose word positions do not decode"))
                        }
                    }
                    lastBlock = (word, last)
                } catch let damage as PostingBlock.Damage {
                    problems.append(problem(file, className, row: first, "a posting block of index \(key[0]) is damaged: \(damage)"))
                }
                return true
            }
        }
        // (Missing ones may hide as many extra ones from the count.)
        if entryCount != listed || problems.contains(where: { $0.reason.contains("is missing from index") }) {
            problems += try extraEntries(table, fullText: fullText, className: className, format: format)
        }
        // The file's own count of its records (Tokyo Cabinet keeps it apart) must be what is there.
        let counted = 1 + rowRecords + records
        let fileCount = try table.recordCount
        if fileCount != counted {
            problems.append(problem(file, className, "the file counts \(fileCount) records but holds \(counted)"))
        }
        return problems
    }

    /// The entries no row record lists (each checked against its row's record).
    private static func extraEntries(_ table: any OrderedStorageTable, fullText: Set<UInt8>, className: String,
                                     format: RecordFormat) throws -> [StorageProblem] {
        var problems: [StorageProblem] = []
        func listed(_ index: UInt8, _ value: [UInt8], row: UInt32) -> Bool {
            let entries = (try? IndexKeys.rowKey(row).withUnsafeBytes { rowKey in
                try table.withValue(forKey: rowKey) {
                    try RowEntries.decode($0, format: format, location: RecordLocation(file: table.path, className: className, rowID: row))
                }
            }) ?? nil
            return entries?.entries.contains(where: { $0.index == index && $0.entry.key == value }) == true
        }
        let entryStart: [UInt8] = [IndexKeys.firstIndexNumber]
        try entryStart.withUnsafeBytes { lower in
            try table.forEach(from: lower, to: nil, descending: false) { key, value in
                guard let row = IndexKeys.row(ofEntry: key) else {
                    problems.append(problem(table.path, className, "an index entry too short to name a row"))
                    return true
                }
                let index = key[0], entryValue = Array(key[1..<(key.count - 4)])
                guard fullText.contains(index) else {
                    if !listed(index, entryValue, row: row) {
                        problems.append(problem(table.path, className, row: row, "an entry of index \(index) that the row's record does not list"))
                    }
                    return true
                }
                // (A damaged block is reported by the count's pass.)
                guard var reader = try? PostingBlock.Reader(value, firstRow: row) else { return true }
                while let member = try? reader.next() {
                    if !listed(index, entryValue, row: member.row) {
                        problems.append(problem(table.path, className, row: member.row, "an entry of index \(index) that the row's record does not list"))
                    }
                }
                return true
            }
        }
        return problems
    }
}
