// swift-tools-version: 6.2
import PackageDescription

/// Settings every px target shares: Swift 6 language mode and the upcoming features that keep
/// imports and existentials explicit.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "px",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "DICOMData", targets: ["DICOMData"]),
        .library(name: "DICOMProtocol", targets: ["DICOMProtocol"]),
        .library(name: "DICOMNetwork", targets: ["DICOMNetwork"]),
        .executable(name: "px-dump", targets: ["px-dump"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // zlib, for Deflated Explicit VR Little Endian (PS3.5 §A.5).
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),

        // The DICOM data layer: dictionary, datasets, transfer syntaxes, Part 10 files,
        // character sets and JSON. No network code.
        .target(
            name: "DICOMData",
            dependencies: ["CZlib"],
            swiftSettings: strictSettings
        ),

        // The DICOM upper layer (PS3.8) and DIMSE (PS3.7) as codecs and state machines:
        // no sockets, NIOCore only.
        .target(
            name: "DICOMProtocol",
            dependencies: [
                "DICOMData",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),

        // The network layer: SwiftNIO transport, association client (SCU) and server (SCP).
        .target(
            name: "DICOMNetwork",
            dependencies: [
                "DICOMData",
                "DICOMProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        .executableTarget(
            name: "px-dump",
            dependencies: [
                "DICOMData",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),

        // Network measurements (association rate, C-STORE throughput), not tests.
        .executableTarget(
            name: "px-net-bench",
            dependencies: [
                "DICOMNetwork",
                "DICOMProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        // Benchmarks (`make bench`), not tests.
        .executableTarget(
            name: "px-bench",
            dependencies: ["DICOMData"],
            swiftSettings: strictSettings
        ),

        .testTarget(
            name: "DICOMDataTests",
            dependencies: ["DICOMData"],
            exclude: ["Support/pydicom_json.py"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "DICOMProtocolTests",
            dependencies: [
                "DICOMProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "DICOMNetworkTests",
            dependencies: [
                "DICOMNetwork",
                "DICOMProtocol",
                "DICOMData",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)
