// swift-tools-version: 6.3
import PackageDescription

// px's examples, each a program of a few lines on `import PX` (Sources/PX/PX.docc tells what they do).
// `make examples` builds them; Tests/PXCommandsTests/ExamplesTests.swift runs them against Orthanc.
let package = Package(
    name: "px-examples",
    dependencies: [.package(name: "px", path: "..")],
    targets: ["echo-and-find", "retrieve-a-study", "sync-to-zip", "storage-scp"].map { name in
        .executableTarget(
            name: name, dependencies: [.product(name: "PX", package: "px")], swiftSettings: [.swiftLanguageMode(.v6)])
    }
)
