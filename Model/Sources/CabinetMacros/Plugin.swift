import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct CabinetMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [StoredModelMacro.self, MarkerMacro.self, StorableCheckMacro.self]
}
