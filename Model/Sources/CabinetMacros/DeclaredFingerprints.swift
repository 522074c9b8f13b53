import SwiftDiagnostics
import SwiftSyntax

/// `@StoredModel(version:fingerprints:)`: the layout fingerprints a class
/// declares in its source, which the macro compares with the ones it computes
/// from the properties. The declaration is the layout the class had when it
/// was last changed on purpose, so a stored property added, removed, moved or
/// retyped without a new version is an error in the build, not only when a
/// store with records opens (ClassLayoutCheck.swift in the main package).
struct DeclaredFingerprints {
    struct Entry {
        let version: Int
        let fingerprint: UInt32
        let element: DictionaryElementSyntax
    }

    /// The `fingerprints:` argument, as written.
    let expression: ExprSyntax
    /// Its entries, in the order written; an entry that is not two literals is
    /// reported by `parse` and left out.
    let entries: [Entry]

    /// The `fingerprints:` argument of `node`, `nil` without one (or with one
    /// that is no dictionary literal); the problems of its form are reported on
    /// the part of it they are about.
    static func parse(_ node: AttributeSyntax, report: (Syntax, FingerprintProblem, [FixIt]) -> Void) -> DeclaredFingerprints? {
        guard case .argumentList(let arguments)? = node.arguments,
              let argument = arguments.first(where: { $0.label?.text == "fingerprints" }) else { return nil }
        guard let dictionary = argument.expression.as(DictionaryExprSyntax.self) else {
            report(Syntax(argument.expression), .notADictionary(argument.expression.trimmedDescription), [])
            return nil
        }
        var entries: [Entry] = []
        if case .elements(let elements) = dictionary.content {
            for element in elements {
                guard let version = integer(element.key).flatMap({ (1...255).contains($0) ? $0 : nil }),
                      let fingerprint = integer(element.value).flatMap({ UInt32(exactly: $0) }) else {
                    report(Syntax(element), .badEntry(element.with(\.trailingComma, nil).trimmedDescription), [])
                    continue
                }
                if entries.contains(where: { $0.version == version }) {
                    report(Syntax(element.key), .duplicate(version), [])
                    continue
                }
                entries.append(Entry(version: version, fingerprint: fingerprint, element: element))
            }
        }
        return DeclaredFingerprints(expression: argument.expression, entries: entries)
    }

    /// Compares the declared fingerprints with `model`'s and reports each
    /// difference. Versions the declaration leaves out are not compared, except
    /// the class's own: a version whose records `upgradeAll` has rewritten may
    /// be dropped from it (with its `@Removed` properties), the current one not.
    func check(against model: GeneratedModel, report: (Syntax, FingerprintProblem, [FixIt]) -> Void) {
        let className = model.className
        for entry in entries {
            guard entry.version <= model.version else {
                report(Syntax(entry.element.key), .afterClassVersion(entry.version, classVersion: model.version), [])
                continue
            }
            let layout = model.layout(ofVersion: entry.version)
            let computed = GeneratedModel.fingerprint(of: layout)
            guard computed != entry.fingerprint else { continue }
            let change = LayoutChange(
                className: className, version: entry.version, classVersion: model.version,
                layout: layout, computed: computed, declared: entry.fingerprint)
            guard entry.version == model.version else {
                report(Syntax(entry.element.value), .olderLayoutChanged(change), [])
                continue
            }
            let newValue = ExprSyntax("\(raw: GeneratedModel.hex(computed))")
                .with(\.leadingTrivia, entry.element.value.leadingTrivia)
                .with(\.trailingTrivia, entry.element.value.trailingTrivia)
            let fixIt = FixIt.replace(
                message: ModelFixIt(message: "declare \(GeneratedModel.hex(computed)), the new layout of version \(entry.version), if no store holds records of it"),
                oldNode: entry.element.value, newNode: newValue)
            report(Syntax(entry.element.value), .currentLayoutChanged(change), [fixIt])
        }
        if !entries.contains(where: { $0.version == model.version }) { reportMissingCurrentVersion(of: model, report: report) }
    }

    /// The class's version is not declared: a new version, or the first time
    /// the class declares fingerprints. The fix-it declares it (every version,
    /// for an empty declaration).
    private func reportMissingCurrentVersion(of model: GeneratedModel, report: (Syntax, FingerprintProblem, [FixIt]) -> Void) {
        let layout = model.layout(ofVersion: model.version)
        let fingerprint = GeneratedModel.fingerprint(of: layout)
        let problem = FingerprintProblem.missingClassVersion(
            className: model.className, version: model.version, layout: layout, fingerprint: fingerprint)
        guard let dictionary = expression.as(DictionaryExprSyntax.self) else { return }
        let written: [String]
        let added: [Int]
        if case .elements(let elements) = dictionary.content, !elements.isEmpty {
            written = elements.map { $0.with(\.trailingComma, nil).trimmedDescription }
            added = [model.version]
        } else {
            written = []
            added = Array(1...model.version)
        }
        let entries = written + added.map { "\($0): \(GeneratedModel.hex(GeneratedModel.fingerprint(of: model.layout(ofVersion: $0))))" }
        let newDictionary = ExprSyntax("[\(raw: entries.joined(separator: ", "))]")
            .with(\.leadingTrivia, dictionary.leadingTrivia)
            .with(\.trailingTrivia, dictionary.trailingTrivia)
        let message = added.count == 1
            ? "declare \(model.version): \(GeneratedModel.hex(fingerprint)), the layout of version \(model.version)"
            : "declare the layout of each version, 1 to \(model.version)"
        report(Syntax(expression), problem, [FixIt.replace(message: ModelFixIt(message: message), oldNode: dictionary, newNode: newDictionary)])
    }

    /// An integer literal's value, in any base Swift writes (`0x620750CB`, `1_000`).
    private static func integer(_ expression: ExprSyntax) -> Int? {
        guard let literal = expression.as(IntegerLiteralExprSyntax.self) else { return nil }
        let text = literal.literal.text.filter { $0 != "_" }
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where text.hasPrefix(prefix) {
            return Int(text.dropFirst(2), radix: radix)
        }
        return Int(text)
    }
}

/// A version's layout that is not the one declared.
struct LayoutChange {
    let className: String
    let version: Int
    let classVersion: Int
    let layout: String
    let computed: UInt32
    let declared: UInt32

    /// "String,[Song] (fingerprint 0x620750CB), not the one declared (0xCC61FC52)".
    var description: String {
        "\(layout.isEmpty ? "nothing" : layout) (fingerprint \(GeneratedModel.hex(computed))), not the one declared (\(GeneratedModel.hex(declared)))"
    }
}

/// What is wrong with `fingerprints:`, each saying what to do.
enum FingerprintProblem {
    case notADictionary(String)
    case badEntry(String)
    case duplicate(Int)
    case afterClassVersion(Int, classVersion: Int)
    case currentLayoutChanged(LayoutChange)
    case olderLayoutChanged(LayoutChange)
    case missingClassVersion(className: String, version: Int, layout: String, fingerprint: UInt32)
    case ownWrite(String)

    /// How a layout is changed: the steps of docs/MODEL.md's "Versions".
    static func newVersion(_ next: Int) -> String {
        "raise the version to \(next), mark added properties @Since(\(next)), keep removed or moved ones where they were marked @Removed(in: \(next))"
    }

    var id: String { "\(self)".prefix { $0 != "(" }.description }

    var message: String {
        switch self {
        case .notADictionary(let text):
            return "fingerprints: takes a dictionary literal of versions and their fingerprints, such as [1: 0x620750CB] (the expansion's layoutFingerprints shows them), not \(text)"
        case .badEntry(let text):
            return "write each entry of fingerprints: as a version from 1 to 255 and its fingerprint, both literals (1: 0x620750CB), not \(text)"
        case .duplicate(let version):
            return "fingerprints: declares version \(version) twice"
        case .afterClassVersion(let version, let classVersion):
            return "fingerprints: declares version \(version), after the class's version \(classVersion): raise @StoredModel(version:) to \(version) or remove the entry"
        case .currentLayoutChanged(let change):
            let next = change.version + 1
            return "the layout of \(change.className)'s version \(change.version) is now \(change.description). "
                + "If a store holds records of version \(change.version), they would be misread: \(FingerprintProblem.newVersion(next)), "
                + "and declare version \(next)'s fingerprint. If none does, declare the new fingerprint"
        case .olderLayoutChanged(let change):
            let next = change.classVersion + 1
            return "the layout of \(change.className)'s version \(change.version) is now \(change.description): "
                + "its records would be misread. A stored property was added, removed, moved or retyped without @Since or @Removed: "
                + "undo that, then \(FingerprintProblem.newVersion(next)) (or, once upgradeAll has rewritten every record of "
                + "version \(change.version), remove its entry)"
        case .missingClassVersion(let className, let version, let layout, let fingerprint):
            return "fingerprints: declares no layout for version \(version), \(className)'s version: declare \(version): "
                + "\(GeneratedModel.hex(fingerprint)) (\(layout.isEmpty ? "nothing" : layout)), so that a change of it is an error"
        case .ownWrite(let className):
            return "\(className) writes its own write(to:), whose layout @StoredModel cannot see: remove fingerprints:"
        }
    }
}
