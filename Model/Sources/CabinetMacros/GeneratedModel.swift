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
