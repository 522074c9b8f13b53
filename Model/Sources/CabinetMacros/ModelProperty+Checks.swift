import SwiftDiagnostics
import SwiftSyntax

/// A property's error and where to show it.
struct PropertyProblem: Error {
    let node: Syntax
    let message: ModelDiagnostic
}

extension ModelProperty {
    /// Whether `@StoredModel` makes it `@Stored`: a single, non-lazy `var` that
    /// the record holds in the class's current version.
    var isTracked: Bool {
        !isTransient && removedIn == nil && declaration.bindingSpecifier.text == "var"
            && declaration.bindings.count == 1 && !declaration.modifiers.contains { $0.name.text == "lazy" }
    }

    /// How the property is written and read, `nil` for one that is not stored
    /// (`@Transient`), or the first thing wrong with it.
    func check(version: Int) -> Result<ValueCoding?, PropertyProblem> {
        let whole = Syntax(declaration)
        if isTransient {
            let marks = ["Indexed", "FullText", "Since", "Removed"]
            if marks.contains(where: declaration.hasAttribute) {
                return .failure(PropertyProblem(node: whole, message: .transientAndStored(name)))
            }
            return .success(nil)
        }
        if declaration.bindings.count > 1 { return .failure(PropertyProblem(node: whole, message: .severalBindings)) }
        if declaration.bindingSpecifier.text == "let" { return .failure(PropertyProblem(node: whole, message: .constant(name))) }
        if declaration.modifiers.contains(where: { $0.name.text == "lazy" }) {
            return .failure(PropertyProblem(node: whole, message: .lazy(name)))
        }
        guard let type else { return .failure(PropertyProblem(node: whole, message: .noType(name))) }
        guard defaultValue != nil else { return .failure(PropertyProblem(node: whole, message: .noDefault(name))) }
        let coding: ValueCoding
        switch ValueCoding.of(type) {
        case .success(let found): coding = found
        case .failure(let reason): return .failure(PropertyProblem(node: Syntax(type), message: .unstorable(name, reason)))
        }
        if let problem = versionProblem(version: version) { return .failure(problem) }
        if isIndexed && coding.indexKind == .none {
            return .failure(PropertyProblem(node: whole, message: .notIndexable(name, type.trimmedDescription)))
        }
        if isFullText && !coding.isText {
            return .failure(PropertyProblem(node: whole, message: .notText(name, type.trimmedDescription)))
        }
        return .success(coding)
    }

    /// `@Since` and `@Removed` must name versions the class has had, in order.
    private func versionProblem(version: Int) -> PropertyProblem? {
        if let attribute = declaration.attribute("Since") {
            let text = declaration.attributeArgument("Since") ?? ""
            guard let since = Int(text) else { return PropertyProblem(node: Syntax(attribute), message: .badVersion("@Since", text)) }
            if !(1...version).contains(since) {
                return PropertyProblem(node: Syntax(attribute), message: .sinceOutOfRange(name, since: since, version: version))
            }
        }
        if let attribute = declaration.attribute("Removed") {
            let text = declaration.attributeArgument("Removed") ?? ""
            guard let removed = Int(text) else { return PropertyProblem(node: Syntax(attribute), message: .badVersion("@Removed(in:)", text)) }
            if removed <= since || removed > version {
                return PropertyProblem(
                    node: Syntax(attribute), message: .removedOutOfRange(name, removedIn: removed, since: since, version: version))
            }
        }
        return nil
    }
}
