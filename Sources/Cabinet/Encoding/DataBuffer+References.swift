// A reference is the row ID as UInt32 LE (0 is nil); a list of references is a
// UInt32 LE count followed by row IDs. A heterogeneous reference puts the
// class ID (UInt8) of the target's class in front of its row ID.
//
// Reading a reference needs the store the buffer came from (its context's
// resolver): each read enters the store as one operation of it, so a buffer on
// another thread cannot touch the store while its own thread is inside, and a
// buffer kept past the store's close throws storeClosed.

extension DataBuffer {
    /// Writes a reference to `object` (its row ID), or `nil`.
    ///
    /// The object must have been inserted; saving an object that refers to one
    /// that was not throws ``/CabinetStorage/CabinetError/referenceToUninsertedObject(_:targetClass:)``.
    public mutating func writeReference(_ object: StoredObject?) {
        guard let object else { return writeUInt32(0) }
        if object.rowID == 0 { noteUninserted(object) }
        writeUInt32(object.rowID)
    }

    /// Reads a reference written by ``writeReference(_:)``: the live object of
    /// that row, or a fault that loads when one of its `@Stored` properties is read.
    ///
    /// Throws ``/CabinetStorage/CabinetError/noStoreForReferences`` for a buffer no store made,
    /// and ``/CabinetStorage/CabinetError/storeClosed(path:)`` once its store is closed.
    public mutating func readReference<T: StoredObject>(to type: T.Type) throws -> T? {
        let (resolver, entered) = try enterResolver()
        defer { resolver.leave(entered) }
        let entry = try resolver.registeredEntry(for: T.self)
        let rowID = try readUInt32()
        if rowID == 0 { return nil }
        try checkReferencedRow(rowID)
        return try ObjectStore.typed(entry.object(at: rowID), as: T.self)
    }

    /// Writes an ordered list of references: a count, then each row ID.
    public mutating func writeReferences<Objects: Collection>(_ objects: Objects) where Objects.Element: StoredObject {
        writeUInt32(UInt32(objects.count))
        for object in objects {
            if object.rowID == 0 { noteUninserted(object) }
            writeUInt32(object.rowID)
        }
    }

    /// Reads a list written by ``writeReferences(_:)``, in order. Nil entries
    /// (row ID 0, which BNRPersistence skipped too) are left out.
    public mutating func readReferences<T: StoredObject>(to type: T.Type) throws -> [T] {
        let (resolver, entered) = try enterResolver()
        defer { resolver.leave(entered) }
        let entry = try resolver.registeredEntry(for: T.self)
        let count = try readListCount(bytesPerElement: 4)
        var result: [T] = []
        result.reserveCapacity(count)
        for _ in 0..<count {
            let rowID = try readUInt32()
            if rowID == 0 { continue }
            try checkReferencedRow(rowID)
            result.append(try ObjectStore.typed(entry.object(at: rowID), as: T.self))
        }
        return result
    }

    /// Writes a reference to an object of any registered class: its class ID, then its row ID.
    public mutating func writeAnyReference(_ object: StoredObject?) {
        guard let object else {
            writeUInt8(0)
            return writeUInt32(0)
        }
        if object.rowID == 0 { noteUninserted(object) }
        writeUInt8(object.entry?.metadata.classID ?? 0)
        writeUInt32(object.rowID)
    }

    /// Reads a reference written by ``writeAnyReference(_:)``.
    ///
    /// Throws ``/CabinetStorage/CabinetError/unknownClassID(_:classID:)`` if no registered class has the stored class ID.
    public mutating func readAnyReference() throws -> StoredObject? {
        let (resolver, entered) = try enterResolver()
        defer { resolver.leave(entered) }
        return try readAnyReference(with: resolver)
    }

    private mutating func readAnyReference(with resolver: ReferenceResolver) throws -> StoredObject? {
        let start = readerIndex
        do {
            let classID = try readUInt8()
            let rowID = try readUInt32()
            if rowID == 0 { return nil }
            try checkReferencedRow(rowID)
            guard let entry = resolver.entry(classID: classID) else {
                throw CabinetError.unknownClassID(location, classID: classID)
            }
            return entry.object(at: rowID)
        } catch {
            readerIndex = start
            throw error
        }
    }

    /// Writes a list of references to objects of any registered classes.
    public mutating func writeAnyReferences<Objects: Collection>(_ objects: Objects) where Objects.Element == StoredObject {
        writeUInt32(UInt32(objects.count))
        for object in objects { writeAnyReference(object) }
    }

    /// Reads a list written by ``writeAnyReferences(_:)``; nil entries are left out.
    public mutating func readAnyReferences() throws -> [StoredObject] {
        let (resolver, entered) = try enterResolver()
        defer { resolver.leave(entered) }
        let count = try readListCount(bytesPerElement: 5)
        var result: [StoredObject] = []
        result.reserveCapacity(count)
        for _ in 0..<count {
            if let object = try readAnyReference(with: resolver) { result.append(object) }
        }
        return result
    }

    /// Reads a list's count and checks the elements fit in what remains, so a
    /// damaged count cannot make the reader allocate.
    mutating func readListCount(bytesPerElement: Int) throws -> Int {
        try readCount(bytesPerElement: bytesPerElement, of: "references")
    }

    /// Reads a count of `what` and checks that many elements fit in what remains.
    mutating func readCount(bytesPerElement: Int, of what: String) throws -> Int {
        let count = Int(try readUInt32())
        guard count <= readableBytes / bytesPerElement else {
            readerIndex -= 4
            throw malformed("a list of \(count) \(what), but only \(readableBytes - 4) bytes follow")
        }
        return count
    }

    func checkReferencedRow(_ rowID: UInt32) throws {
        if rowID < ClassMetadata.firstObjectRowID {
            throw malformed("a reference to row \(rowID), which holds no object")
        }
    }

    /// The resolver of the buffer's store, entered (pass `entered` to its `leave(_:)`).
    @inline(__always)
    func enterResolver() throws -> (resolver: ReferenceResolver, entered: Bool) {
        guard let resolver = context?.resolver else { throw CabinetError.noStoreForReferences }
        return (resolver, try resolver.enter())
    }
}
