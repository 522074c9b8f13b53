import SwiftSyntax

/// How one stored type is written and read: the `DataBuffer` calls the
/// hand-written class would make, as source text. The type is known only by
/// its spelling; a name the macro does not know (an enum, a `StoredObject`
/// subclass) is written through `writeModelValue`, whose overloads the
/// compiler picks by what the type is.
struct ValueCoding: Sendable {
    /// Writes the value `$value` (a placeholder) into `buffer`.
    let write: @Sendable (_ buffer: String, _ value: String) -> String
    /// Reads a value from `buffer` (an expression that throws).
    let read: @Sendable (_ buffer: String) -> String
    /// The fewest bytes a value takes, for `readArray(minimumElementSize:)`.
    let minimumSize: Int
    /// The type as the bytes lay it out, for the class's layout fingerprints:
    /// spellings that write the same bytes (`Float` and `Float32`, `String` and
    /// `String?`, `Int` and `Int64`) are one layout, so changing one for the
    /// other is no change of layout. A name the macro does not know stays as spelled.
    let layout: String
    /// What an index on the property is: `.value`, `.references`, or none.
    let indexKind: IndexKind
    /// Whether it is `String` or `String?`, which a full-text index accepts.
    var isText = false
    /// Whether it goes through `writeModelValue` (a type known only by name),
    /// which the compiler checks on the property (`@_StorableCheck`).
    var isOverloaded = false

    enum IndexKind { case value, references, none }

    /// Calls `writeX(value)` / `readX()`; `layout` defaults to the method's name.
    static func method(_ name: String, size: Int, index: IndexKind = .value, layout: String? = nil) -> ValueCoding {
        ValueCoding(write: { "\($0).write\(name)(\($1))" }, read: { "try \($0).read\(name)()" }, minimumSize: size,
                    layout: layout ?? name, indexKind: index)
    }

    /// Scalar types by spelling, with the method that writes them.
    static let scalars: [String: ValueCoding] = {
        var table: [String: ValueCoding] = [:]
        for (names, method, size) in [
            (["Int8"], "Int8", 1), (["UInt8"], "UInt8", 1), (["Bool"], "Bool", 1),
            (["Int16"], "Int16", 2), (["UInt16"], "UInt16", 2),
            (["Int32"], "Int32", 4), (["UInt32"], "UInt32", 4),
            (["Int64"], "Int64", 8), (["UInt64"], "UInt64", 8), (["Int"], "Int", 8), (["UInt"], "UInt", 8),
            (["Float", "Float32"], "Float32", 4), (["Double", "Float64"], "Float64", 8),
            (["Data", "Foundation.Data"], "Data", 4),
        ] as [([String], String, Int)] {
            // Int and UInt are written as 64 bits, the bytes of Int64 and UInt64.
            let layout = ["Int": "Int64", "UInt": "UInt64"][method] ?? method
            for name in names { table[name] = .method(method, size: size, index: method == "Data" ? .none : .value, layout: layout) }
        }
        var string = ValueCoding.method("String", size: 4)
        string.isText = true
        table["String"] = string
        table["Swift.String"] = string
        let date = ValueCoding(
            write: { "\($0).writeDate(\($1))" },
            // writeDate writes the reference date as 0, which readDate reads as nil.
            read: { "(try \($0).readDate() ?? Foundation.Date(timeIntervalSinceReferenceDate: 0))" },
            minimumSize: 8, layout: "Date", indexKind: .value)
        table["Date"] = date
        table["Foundation.Date"] = date
        // The standard library's types spelled with their module (`Swift.Int`) are the same types.
        for (name, coding) in table where !name.contains(".") && !["Data", "Date"].contains(name) {
            table["Swift." + name] = coding
        }
        return table
    }()

    /// Arrays with a method of their own, and the layout of their element.
    static let arrays: [String: (method: String, element: String)] = {
        let plain: [String: (method: String, element: String)] = [
            "String": ("Strings", "String"), "UInt32": ("UInt32s", "UInt32"), "Int64": ("Int64s", "Int64"),
            "Float64": ("Float64s", "Float64"), "Double": ("Float64s", "Float64"), "UInt8": ("Bytes", "UInt8"),
        ]
        return plain.merging(plain.map { ("Swift." + $0.key, $0.value) }) { first, _ in first }
    }()

    /// Names of types that have no `DataBuffer` method, refused by name (the
    /// compiler would refuse them too, less clearly, in `writeModelValue`).
    static let unstorableNames: Set<String> = [
        "Set", "Dictionary", "Character", "URL", "UUID", "Decimal",
        "Swift.Set", "Swift.Dictionary", "Swift.Character", "Foundation.URL", "Foundation.UUID", "Foundation.Decimal",
    ]

    /// The coding of `type`, or why it cannot be stored.
    static func of(_ type: TypeSyntax) -> Result<ValueCoding, Unstorable> {
        if let optional = type.as(OptionalTypeSyntax.self) {
            return optionalCoding(of: optional.wrappedType)
        }
        if let array = type.as(ArrayTypeSyntax.self) {
            return arrayCoding(of: array.element)
        }
        if let named = type.as(IdentifierTypeSyntax.self), let generic = named.genericArgumentClause {
            let arguments = generic.arguments.map { $0.argument.trimmedDescription }
            switch (named.name.text, arguments.count) {
            case ("StoredList", 1):
                return .success(ValueCoding(
                    write: { "\($0).writeList(\($1))" }, read: { "try \($0).readList(of: \(arguments[0]).self)" },
                    minimumSize: 4, layout: "StoredList<\(arguments[0])>", indexKind: .none))
            case ("Optional", 1), ("Array", 1):
                let inner = TypeSyntax(stringLiteral: arguments[0])
                return named.name.text == "Optional" ? optionalCoding(of: inner) : arrayCoding(of: inner)
            default:
                return .failure(.generic(named.name.text))
            }
        }
        if type.is(IdentifierTypeSyntax.self) || type.is(MemberTypeSyntax.self) {
            let name = type.trimmedDescription
            if let scalar = scalars[name] { return .success(scalar) }
            if ["StoredObject", "Cabinet.StoredObject"].contains(name) { return .failure(.bareObject(name)) }
            if ["Any", "AnyObject"].contains(name) { return .failure(.shape(name)) }
            if unstorableNames.contains(name) { return .failure(.known(name)) }
            return .success(overloaded(name, minimumSize: 1, index: .value))   // an enum
        }
        return .failure(.shape(type.trimmedDescription))
    }

    /// Written through `writeModelValue`, whose overloads the compiler picks by
    /// what `type` turns out to be (a StoredObject subclass, an enum).
    private static func overloaded(_ type: String, minimumSize: Int, index: IndexKind) -> ValueCoding {
        var coding = ValueCoding(
            write: { "\($0).writeModelValue(\($1))" }, read: { "try \($0).readModelValue(\(type).self)" },
            minimumSize: minimumSize, layout: type, indexKind: index)
        coding.isOverloaded = true
        return coding
    }

    /// A plain type name that is no scalar the macro knows, nor one it refuses:
    /// an enum or a StoredObject subclass.
    private static func isOtherName(_ type: TypeSyntax) -> Bool {
        let plain = type.as(IdentifierTypeSyntax.self).map { $0.genericArgumentClause == nil } ?? type.is(MemberTypeSyntax.self)
        let name = type.trimmedDescription
        return plain && scalars[name] == nil && !unstorableNames.contains(name) && !["Any", "AnyObject"].contains(name)
    }

    private static func optionalCoding(of wrapped: TypeSyntax) -> Result<ValueCoding, Unstorable> {
        let name = wrapped.trimmedDescription
        switch name {
        case "String", "Swift.String":
            // The bytes of String: "" and nil are both a count of 0.
            var coding = ValueCoding.method("OptionalString", size: 4, layout: "String")
            coding.isText = true
            return .success(coding)
        case "Date", "Foundation.Date":
            return .success(ValueCoding(write: { "\($0).writeDate(\($1))" }, read: { "try \($0).readDate()" }, minimumSize: 8,
                                        layout: "Date", indexKind: .value))
        case "StoredObject", "Cabinet.StoredObject":
            return .success(.method("AnyReference", size: 5, index: .none, layout: "StoredObject?"))
        default: break
        }
        if isOtherName(wrapped) {
            return .success(overloaded("\(name)?", minimumSize: 1, index: .value))   // a reference or an optional enum
        }
        return of(wrapped).map { inner in
            var coding = ValueCoding(
                write: { "\($0).writeOptional(\($1)) { \(inner.write("$0", "$1")) }" },
                read: { "try \($0).readOptional { \(inner.read("$0")) }" },
                minimumSize: 1, layout: "\(inner.layout)?", indexKind: inner.indexKind == .value ? .value : .none)
            coding.isOverloaded = inner.isOverloaded
            return coding
        }
    }

    private static func arrayCoding(of element: TypeSyntax) -> Result<ValueCoding, Unstorable> {
        let name = element.trimmedDescription
        if let array = arrays[name] { return .success(.method(array.method, size: 4, index: .none, layout: "[\(array.element)]")) }
        if name == "StoredObject" || name == "Cabinet.StoredObject" {
            return .success(.method("AnyReferences", size: 4, index: .none, layout: "[StoredObject]"))
        }
        if isOtherName(element) {
            return .success(overloaded("[\(name)]", minimumSize: 4, index: .references))   // a to-many relationship or enums
        }
        return of(element).map { inner in
            var coding = ValueCoding(
                write: { "\($0).writeArray(\($1)) { \(inner.write("$0", "$1")) }" },
                read: { "try \($0).readArray(minimumElementSize: \(inner.minimumSize)) { \(inner.read("$0")) }" },
                minimumSize: 4, layout: "[\(inner.layout)]", indexKind: .none)
            coding.isOverloaded = inner.isOverloaded
            return coding
        }
    }
}

/// Why a type cannot be stored; the diagnostic says what to do instead.
enum Unstorable: Error {
    case generic(String), bareObject(String), known(String), shape(String)
}
