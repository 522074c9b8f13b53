/// An index a class declares on one of its properties, so that queries find
/// objects without reading every record:
///
/// ```swift
/// final class Song: StoredObject {
///     @Stored var artist = ""
///     @Stored var seconds: UInt32 = 0
///     @Stored var title = ""
///     override class var indexes: [StoredIndex] {
///         [.value(\Song.artist), .value(\Song.seconds), .fullText(\Song.title)]
///     }
/// }
/// let queen = try store.fetch(Song.self, where: \.artist, equals: "Queen")
/// ```
///
/// - ``value(_:named:)``: equality and ranges on an ``IndexableValue`` property.
/// - ``fullText(_:named:)-(KeyPath<Object,String>,_)``: word search in a `String` property (see ``ObjectStore/search(_:matching:limit:)``).
/// - ``references(_:named:)``: the inverse of a to-many relationship (which objects hold a given one).
///
/// Indexes are kept in the class's index file (`<storedName>.index`, a
/// B+ tree beside its class file), changed in the same all-or-nothing save as the
/// records. An index is known by its name (by default its place in the
/// class's list, kind and value type: give a name if you reorder them). An
/// index replaced by another under the same name (`.value(\Song.artist)` by
/// `.value(\Song.title)` at the same place) is noticed at `register` from a
/// sample of saved objects and built again (a read-only store refuses its
/// queries instead); give a changed index a new name to be sure.
public struct StoredIndex: @unchecked Sendable {
    /// What an index answers.
    public enum Kind: String, Sendable {
        case value, fullText, references
    }

    public let kind: Kind
    /// The key path of the indexed property (queries find the index by it).
    public let keyPath: AnyKeyPath
    /// The name the index file knows it by; `nil` until the class's list gives the default.
    public let explicitName: String?
    /// The value's type, part of the default name (a changed type makes a new index).
    let valueType: String
    /// The entries of one object: each a key's bytes after the index's number, before the row ID, and a value.
    let entries: (StoredObject) throws(IndexValueError) -> [IndexEntry]
    /// Whether an object is of the class whose key path this is (checked at register:
    /// a key path of another class in a class's list is refused there).
    let accepts: (StoredObject) -> Bool
    /// A full-text index's text of one object (`nil` for an object of another
    /// class): a search vouches for each row it hands over by matching it, which
    /// needs the words, not the entries ``entries`` makes of them.
    let text: ((StoredObject) -> String?)?

    private init<Object: StoredObject>(kind: Kind, keyPath: AnyKeyPath, of: Object.Type, explicitName: String?, valueType: String,
                                       text: ((Object) -> String)? = nil,
                                       entries: @escaping (Object) throws(IndexValueError) -> [IndexEntry]) {
        self.kind = kind
        self.keyPath = keyPath
        self.explicitName = explicitName
        self.valueType = valueType
        self.accepts = { $0 is Object }
        self.text = text.map { text in { ($0 as? Object).map(text) } }
        self.entries = { object throws(IndexValueError) in
            guard let object = object as? Object else {
                throw IndexValueError(description: "is declared on \(Object.self), not on \(type(of: object))")
            }
            return try entries(object)
        }
    }

    /// An index of a property's values: equality, ranges, counts, in value order.
    public static func value<Object: StoredObject, Value: IndexableValue>(_ keyPath: KeyPath<Object, Value>,
                                                                          named name: String? = nil) -> StoredIndex {
        StoredIndex(kind: .value, keyPath: keyPath, of: Object.self, explicitName: name, valueType: String(describing: Value.self)) { object throws(IndexValueError) in
            var bytes: [UInt8] = []
            try object[keyPath: keyPath].indexBytes(into: &bytes)
            return [IndexEntry(key: bytes)]
        }
    }

    /// A full-text index of a string property: its words, folded (Unicode
    /// compatibility forms, case and diacritics), for ``ObjectStore/search(_:matching:limit:)``. See
    /// ``ObjectStore/search(_:matching:limit:)`` for what a query can ask.
    public static func fullText<Object: StoredObject>(_ keyPath: KeyPath<Object, String>, named name: String? = nil) -> StoredIndex {
        StoredIndex(kind: .fullText, keyPath: keyPath, of: Object.self, explicitName: name, valueType: "String",
                    text: { $0[keyPath: keyPath] }) { object in
            FullTextIndexing.entries(of: object[keyPath: keyPath])
        }
    }

    /// A full-text index of an optional string property (`nil` has no words).
    public static func fullText<Object: StoredObject>(_ keyPath: KeyPath<Object, String?>, named name: String? = nil) -> StoredIndex {
        StoredIndex(kind: .fullText, keyPath: keyPath, of: Object.self, explicitName: name, valueType: "String",
                    text: { $0[keyPath: keyPath] ?? "" }) { object in
            FullTextIndexing.entries(of: object[keyPath: keyPath] ?? "")
        }
    }

    /// An index of the objects a to-many relationship refers to: finds the
    /// objects whose list contains a given one (``ObjectStore/fetch(_:where:contains:limit:)``).
    public static func references<Object: StoredObject, Target: StoredObject>(_ keyPath: KeyPath<Object, [Target]>,
                                                                             named name: String? = nil) -> StoredIndex {
        StoredIndex(kind: .references, keyPath: keyPath, of: Object.self, explicitName: name, valueType: String(describing: Target.self)) { object in
            var seen = Set<UInt32>()
            return object[keyPath: keyPath].compactMap { target in
                // Each row once: the index says whether the list holds it, not how often.
                guard target.rowID != 0, seen.insert(target.rowID).inserted else { return nil }
                return IndexEntry(key: IndexKeys.rowBytes(target.rowID))
            }
        }
    }

    /// The name for the index at `position` of its class's list.
    func name(at position: Int) -> String {
        explicitName ?? "\(position):\(kind.rawValue):\(valueType)"
    }

    /// How errors name the index at `position` of class `className`'s list: by
    /// the name it was given, or by its declaration (a key path's property name
    /// can't be known at run time).
    func label(in className: String, at position: Int) -> String {
        explicitName.map { "'\($0)' of \(className)" } ?? "\(className).indexes[\(position)] (a \(kind.rawValue) index of \(valueType))"
    }
}
