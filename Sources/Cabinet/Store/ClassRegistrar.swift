/// Reads or creates a class's metadata row when the class is registered, and
/// hands out class IDs that no other class file in the store uses.
struct ClassRegistrar {
    unowned let store: ObjectStore

    static func validate(name: String, of type: StoredObject.Type) throws {
        let reason: String?
        if let problem = TableName.problem(with: name) {
            reason = "its stored name is not usable: \(problem)"
        } else if name == ObjectStore.namedBuffersTableName {
            reason = "'\(name)' is the file of named buffers"
        } else {
            reason = nil
        }
        if let reason {
            throw CabinetError.classConflict(className: String(describing: type), reason: reason)
        }
    }

    /// The metadata of `name`'s table; a new table gets fresh metadata, written at once
    /// so that its class ID is taken before any other class asks for one.
    func metadata(for type: StoredObject.Type, name: String, table: any StorageTable) throws -> ClassMetadata {
        if let existing = try ClassRegistrar.readMetadata(of: table, className: name) {
            return existing
        }
        if table.recordCount > 0 {
            throw CabinetError.malformedMetadata(RecordLocation(file: table.path, className: name, rowID: ClassMetadata.rowID),
                                                 reason: "the file has \(table.recordCount) records but no metadata row")
        }
        let metadata = ClassMetadata.new(version: type.version, classID: try freeClassID(excluding: name))
        try table.transaction {
            try metadata.bytes.withUnsafeBytes { try table.setValue($0, forRow: ClassMetadata.rowID) }
        }
        return metadata
    }

    static func readMetadata(of table: any StorageTable, className: String?) throws -> ClassMetadata? {
        let location = RecordLocation(file: table.path, className: className, rowID: ClassMetadata.rowID)
        return try table.withValue(forRow: ClassMetadata.rowID) { try ClassMetadata(bytes: $0, location: location) }
    }

    /// The lowest class ID not used by a registered class nor by any other class file in the store.
    private func freeClassID(excluding name: String) throws -> UInt8 {
        var used = Set(store.entriesByName.values.map(\.metadata.classID))
        for other in try store.backend.tableNames()
        where other != name && other != ObjectStore.namedBuffersTableName && store.entriesByName[other] == nil {
            // An unregistered class's file: its ID is taken even though this program does not use the class.
            if let metadata = try? ClassRegistrar.readMetadata(of: store.backend.openTable(named: other), className: other) {
                used.insert(metadata.classID)
            }
        }
        guard let free = (0...UInt8.max).first(where: { !used.contains($0) }) else {
            throw CabinetError.classConflict(className: name, reason: "the store already has 256 classes, the most a class ID can name")
        }
        return free
    }
}
