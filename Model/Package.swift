// swift-tools-version:6.0
import CompilerPluginSupport
import PackageDescription

// The @StoredModel macro, in a package of its own: SwiftPM fetches the
// dependencies of every macro target of a package, used or not, so in the main
// package swift-syntax would reach every app that depends on Cabinet. Here it
// reaches only the apps that depend on CabinetModel (Tools/check-package-graph.sh
// checks both). It depends on the main package by path, as Tools/ does.
let package = Package(
    name: "CabinetModel",
    products: [
        .library(name: "CabinetModel", targets: ["CabinetModel"]),
    ],
    dependencies: [
        .package(name: "Cabinet", path: ".."),
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.1"..<"604.0.0"),
        // The expansion tests' only: a test target's dependency is fetched by no app.
        .package(url: "https://github.com/pointfreeco/swift-macro-testing", from: "0.7.0"),
    ],
    targets: [
        // The compiler plugin: reads a class's properties, writes its read(from:) and write(to:).
        .macro(
            name: "CabinetMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        // What an app imports: @StoredModel and its property attributes, and Cabinet with them.
        .target(
            name: "CabinetModel",
            dependencies: [.product(name: "Cabinet", package: "Cabinet"), "CabinetMacros"]
        ),
        // The README's first example (`make demo` runs it; Tests/CabinetTests/ReadmeExampleTests.swift
        // keeps the README's code block the same). An executable target, not a product: apps that
        // depend on CabinetModel never build it.
        .executableTarget(
            name: "ReadmeExample",
            dependencies: ["CabinetModel"],
            path: "Examples/ReadmeExample"
        ),
        // The macro's expansions and diagnostics, as source text.
        .testTarget(
            name: "CabinetMacrosTests",
            dependencies: ["CabinetMacros", .product(name: "MacroTesting", package: "swift-macro-testing")]
        ),
        // Macro classes against hand-written twins, versions and indexes, on every backend
        // (Shared/ links the main package's backend list and test Redis server).
        .testTarget(
            name: "CabinetModelTests",
            dependencies: ["CabinetModel", .product(name: "CabinetRedis", package: "Cabinet")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
