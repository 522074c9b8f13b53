import SwiftSyntax

/// The members `@StoredModel` writes for one class, as source.
struct GeneratedModel {
    let className: String
    let version: Int
    /// The stored properties in declaration order, which is the order of the record.
    let properties: [(ModelProperty, ValueCoding)]
    /// `open `, `public `, `package ` or nothing: the overrides are as visible as the class.
    let access: String

    /// Reads each property the record's version holds; one the record lacks gets
    /// its default. As `read(from:)`, or, for a class that writes its own
    /// `read(from:)` (to derive a new property from a removed one, say), as
    /// `readStoredProperties(from:)`, for that method to call.
    func readMethod(override: Bool) -> DeclSyntax {
        let lines = properties.map { property, coding -> String in
            let read = "self.\(property.name) = \(coding.read("buffer"))"
            var conditions: [String] = []
            if property.since > 0 { conditions.append("buffer.version >= \(property.since)") }
            if let removed = property.removedIn { conditions.append("buffer.version < \(removed)") }
            guard !conditions.isEmpty, let defaultValue = property.defaultValue else { return read }
            return """
                if \(conditions.joined(separator: " && ")) {
                    \(read)
                } else {
                    self.\(property.name) = \(defaultValue.trimmedDescription)
                }
                """
        }
        return """
            \(raw: override ? "\(access)override func read" : "\(access == "open " ? "public " : access)final func readStoredProperties")(from buffer: inout Cabinet.DataBuffer) throws {
                \(raw: lines.joined(separator: "\n"))
            }
            """
    }

    /// Writes the properties of the current version, in declaration order.
    var writeMethod: DeclSyntax {
        let lines = properties.compactMap { property, coding in
            property.removedIn == nil ? coding.write("buffer", "self.\(property.name)") : nil
        }
        return """
            \(raw: access)override func write(to buffer: inout Cabinet.DataBuffer) {
                \(raw: lines.joined(separator: "\n"))
            }
            """
    }

    /// The layout of version `v`'s record: the layouts of the properties it
    /// holds (`since ≤ v < removedIn`), in declaration order, comma-separated.
    func layout(ofVersion v: Int) -> String {
        properties.filter { property, _ in property.since <= v && (property.removedIn.map { v < $0 } ?? true) }
            .map { $0.1.layout }
            .joined(separator: ",")
    }

    /// `layoutFingerprints`: each version's layout hashed. The store keeps them
    /// in the class's metadata row and compares them when the class is
    /// registered again (a property removed or moved without `@Removed` or
    /// `@Since` changes one). Each is followed by its layout, for a person
    /// reading the expansion.
    var layoutFingerprintsProperty: DeclSyntax {
        let entries = (1...version).map { v in
            let layout = layout(ofVersion: v)
            return "\(v): \(GeneratedModel.hex(GeneratedModel.fingerprint(of: layout))),  // \(layout.isEmpty ? "nothing" : layout)"
        }
        return """
            \(raw: access)override class var layoutFingerprints: [UInt8: UInt32] {
                [
                    \(raw: entries.joined(separator: "\n"))
                ]
            }
            """
    }

    /// FNV-1a, 32 bits, of the UTF-8 of `layout`: the same on every machine and
    /// compiler, as a store written by one build and opened by another needs.
    static func fingerprint(of layout: String) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in layout.utf8 {
            hash ^= UInt32(byte)
            hash &*= 0x0100_0193
        }
        return hash
    }

    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }

    var versionProperty: DeclSyntax {
        "\(raw: access)override class var version: UInt8 { \(raw: version) }"
    }

    /// `@Indexed` and `@FullText` as StoredIndex values; `nil` when there are none.
    var indexesProperty: DeclSyntax? {
        var indexes: [String] = []
        for (property, coding) in properties {
            let keyPath = "\\\(className).\(property.name)"
            if property.isIndexed { indexes.append(coding.indexKind == .references ? ".references(\(keyPath))" : ".value(\(keyPath))") }
            if property.isFullText { indexes.append(".fullText(\(keyPath))") }
        }
        guard !indexes.isEmpty else { return nil }
        return "\(raw: access)override class var indexes: [Cabinet.StoredIndex] { [\(raw: indexes.joined(separator: ", "))] }"
    }
}
