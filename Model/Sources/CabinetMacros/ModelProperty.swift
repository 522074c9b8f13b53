import SwiftDiagnostics
import SwiftSyntax

/// One `var` of a `@StoredModel` class, as the macro reads it: its name, type,
/// default and attributes. `nil` from `init` means the member is no stored
/// property the macro handles (static, computed, a method).
struct ModelProperty {
    let declaration: VariableDeclSyntax
    let name: String
    let type: TypeSyntax?
    let defaultValue: ExprSyntax?
    let isTransient: Bool
    let isIndexed: Bool
    let isFullText: Bool
    /// `@Since(n)`: the first version whose records hold it (0: every version).
    let since: Int
    /// `@Removed(in: n)`: the first version whose records no longer hold it.
    let removedIn: Int?

    init?(_ declaration: VariableDeclSyntax) {
        let modifiers = Set(declaration.modifiers.map(\.name.text))
        guard modifiers.isDisjoint(with: ["static", "class"]), let binding = declaration.bindings.first else { return nil }
        if let accessors = binding.accessorBlock?.accessors {
            // Computed (a getter) unless every accessor is an observer.
            guard case .accessors(let list) = accessors,
                  list.allSatisfy({ ["willSet", "didSet"].contains($0.accessorSpecifier.text) }) else { return nil }
        }
        self.declaration = declaration
        name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmedDescription ?? binding.pattern.trimmedDescription
        defaultValue = binding.initializer?.value
        type = binding.typeAnnotation?.type ?? binding.initializer.flatMap { ModelProperty.inferredType(of: $0.value) }
        isTransient = declaration.hasAttribute("Transient")
        isIndexed = declaration.hasAttribute("Indexed")
        isFullText = declaration.hasAttribute("FullText")
        since = declaration.attributeArgument("Since").flatMap { Int($0) } ?? 0
        removedIn = declaration.attributeArgument("Removed").flatMap { Int($0) }
    }

    /// Whether the record of a class version holds the property.
    var isStoredInEveryVersion: Bool { since == 0 && removedIn == nil }

    /// The type of a literal or a call of a type's initializer: what Swift infers for `var x = ...`.
    static func inferredType(of value: ExprSyntax) -> TypeSyntax? {
        if value.is(StringLiteralExprSyntax.self) { return "String" }
        if value.is(IntegerLiteralExprSyntax.self) { return "Int" }
        if value.is(FloatLiteralExprSyntax.self) { return "Double" }
        if value.is(BooleanLiteralExprSyntax.self) { return "Bool" }
        if let prefix = value.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            return inferredType(of: prefix.expression)
        }
        guard let callee = value.as(FunctionCallExprSyntax.self)?.calledExpression else { return nil }
        if let name = callee.as(DeclReferenceExprSyntax.self), name.baseName.text.first?.isUppercase == true {
            return TypeSyntax(stringLiteral: name.baseName.text)
        }
        if callee.is(GenericSpecializationExprSyntax.self) {
            return TypeSyntax(stringLiteral: callee.trimmedDescription)   // StoredList<Song>()
        }
        return nil
    }
}

extension VariableDeclSyntax {
    func attribute(_ name: String) -> AttributeSyntax? {
        for element in attributes {
            if case .attribute(let attribute) = element,
               ["\(name)", "CabinetModel.\(name)"].contains(attribute.attributeName.trimmedDescription) {
                return attribute
            }
        }
        return nil
    }

    func hasAttribute(_ name: String) -> Bool { attribute(name) != nil }

    /// The text of the first argument of `@name(...)`: `2` of `@Since(2)`.
    func attributeArgument(_ name: String) -> String? {
        guard case .argumentList(let arguments)? = attribute(name)?.arguments else { return nil }
        return arguments.first?.expression.trimmedDescription
    }
}
