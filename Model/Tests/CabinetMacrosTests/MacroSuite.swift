import CabinetMacros
import SwiftSyntaxMacros

/// The macros as the tests' sources spell them.
let cabinetMacros: [String: Macro.Type] = [
    "StoredModel": StoredModelMacro.self,
    "Indexed": MarkerMacro.self,
    "FullText": MarkerMacro.self,
    "Transient": MarkerMacro.self,
    "Since": MarkerMacro.self,
    "Removed": MarkerMacro.self,
    "_StorableCheck": StorableCheckMacro.self,
]
