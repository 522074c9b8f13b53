import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@StoredModel` and `@StoredModel(version:)`: marks each stored property
/// `@Stored` (the member-attribute role) and writes `read(from:)`,
/// `write(to:)`, `version`, `indexes` and `layoutFingerprints` (the member role), each only where
/// the class does not declare it itself; a class that declares `read(from:)`
/// gets `readStoredProperties(from:)` to call from it.
public struct StoredModelMacro: MemberMacro, MemberAttributeMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard let classDeclaration = declaration.as(ClassDeclSyntax.self), superclass(of: classDeclaration) == nil,
              let variable = member.as(VariableDeclSyntax.self),
              let property = ModelProperty(variable), property.isTracked else { return [] }
        var attributes: [AttributeSyntax] = variable.hasAttribute("Stored") ? [] : ["@Cabinet.Stored"]
        if let type = property.type, case .success(let coding) = ValueCoding.of(type), coding.isOverloaded {
            attributes.append("@CabinetModel._StorableCheck")
        }
        return attributes
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDeclaration = declaration.as(ClassDeclSyntax.self), classDeclaration.inheritanceClause != nil else {
            context.diagnose(Diagnostic(node: node, message: ModelDiagnostic.notAClass))
            return []
        }
        if let superclass = superclass(of: classDeclaration) {
            context.diagnose(Diagnostic(node: superclass, message: ModelDiagnostic.notADirectSubclass(
                classDeclaration.name.trimmedDescription, superclass: superclass.trimmedDescription)))
            return []
        }
        guard let version = classVersion(node, in: context) else { return [] }
        let report = { (node: Syntax, problem: FingerprintProblem, fixIts: [FixIt]) in
            context.diagnose(Diagnostic(node: node, message: ModelDiagnostic.fingerprint(problem), fixIts: fixIts))
        }
        let fingerprints = DeclaredFingerprints.parse(node, report: report)
        var properties: [(ModelProperty, ValueCoding)] = []
        var valid = true
        for member in classDeclaration.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self), let property = ModelProperty(variable) else { continue }
            switch property.check(version: version) {
            case .success(let coding?): properties.append((property, coding))
            case .success(nil): continue
            case .failure(let problem):
                context.diagnose(Diagnostic(node: problem.node, message: problem.message))
                valid = false
            }
        }
        guard valid else { return [] }
        let model = GeneratedModel(
            className: classDeclaration.name.trimmedDescription, version: version, properties: properties,
            access: accessModifier(of: classDeclaration))
        let declared = declaredMembers(of: classDeclaration)
        if let fingerprints {
            if declared.contains("write") {
                report(Syntax(fingerprints.expression), .ownWrite(model.className), [])
            } else {
                // Reported, but the members are still written: the layout error is then the only one.
                fingerprints.check(against: model, report: report)
            }
        }
        var members: [DeclSyntax] = []
        members.append(model.readMethod(override: !declared.contains("read")))
        if !declared.contains("write") { members.append(model.writeMethod) }
        if !declared.contains("version") { members.append(model.versionProperty) }
        // A class that writes its own records has a layout the macro cannot see: it gets no fingerprints.
        if !declared.contains("write") && !declared.contains("layoutFingerprints") { members.append(model.layoutFingerprintsProperty) }
        if !declared.contains("indexes"), let indexes = model.indexesProperty { members.append(indexes) }
        return members
    }

    /// The `version:` argument, 1 without one; `nil` (and an error) if it is no number in 1...255.
    private static func classVersion(_ node: AttributeSyntax, in context: some MacroExpansionContext) -> Int? {
        guard case .argumentList(let arguments)? = node.arguments,
              let argument = arguments.first(where: { $0.label?.text == "version" }) else { return 1 }
        let text = argument.expression.trimmedDescription
        guard let version = Int(text), (1...255).contains(version) else {
            context.diagnose(Diagnostic(node: argument.expression, message: ModelDiagnostic.badVersion("@StoredModel(version:)", text)))
            return nil
        }
        return version
    }

    /// The class's superclass when it is not `StoredObject`: `@StoredModel`
    /// writes whole records, so it takes only a direct subclass. (Swift lists
    /// the superclass first, so the first inherited type is either it or a protocol.)
    private static func superclass(of declaration: ClassDeclSyntax) -> TypeSyntax? {
        guard let first = declaration.inheritanceClause?.inheritedTypes.first?.type else { return nil }
        let name = first.trimmedDescription
        if ["StoredObject", "Cabinet.StoredObject", "CabinetModel.StoredObject"].contains(name) { return nil }
        return first
    }

    /// `open` or `public` for the generated overrides of an open or public class, else nothing.
    private static func accessModifier(of declaration: ClassDeclSyntax) -> String {
        let modifiers = declaration.modifiers.map(\.name.text)
        if modifiers.contains("open") { return "open " }
        if modifiers.contains("public") || modifiers.contains("package") {
            return modifiers.contains("package") ? "package " : "public "
        }
        return ""
    }

    /// Which of read, write, version, indexes and layoutFingerprints the class declares itself.
    private static func declaredMembers(of declaration: ClassDeclSyntax) -> Set<String> {
        var names: Set<String> = []
        for member in declaration.memberBlock.members {
            if let function = member.decl.as(FunctionDeclSyntax.self),
               ["read", "write"].contains(function.name.text), function.signature.parameterClause.parameters.count == 1 {
                names.insert(function.name.text)
            }
            if let variable = member.decl.as(VariableDeclSyntax.self),
               variable.modifiers.contains(where: { ["class", "static"].contains($0.name.text) }),
               let name = variable.bindings.first?.pattern.as(IdentifierPatternSyntax.self)?.identifier.text,
               ["version", "indexes", "layoutFingerprints"].contains(name) {
                names.insert(name)
            }
        }
        return names
    }
}

/// `@_StorableCheck`, which `@StoredModel` adds to a property whose type it
/// knows only by name: a function that is never called but reads the type as
/// `read(from:)` does, so that a type no `readModelValue` takes is an error on
/// the property itself rather than only in the generated method.
public struct StorableCheckMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self), let property = ModelProperty(variable),
              let type = property.type, case .success(let coding) = ValueCoding.of(type) else { return [] }
        return ["""
            private static func _cabinetStorable_\(raw: property.name.filter { $0 != "`" })(_ buffer: inout Cabinet.DataBuffer) throws {
                _ = \(raw: coding.read("buffer"))
            }
            """]
    }
}

/// `@Indexed`, `@FullText`, `@Transient`, `@Since` and `@Removed`: marks that
/// `@StoredModel` reads; on their own they add nothing.
public struct MarkerMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] { [] }
}
