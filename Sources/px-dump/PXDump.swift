import ArgumentParser

@main
struct PXDump: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "px-dump", abstract: "Print DICOM files as JSON.")
    func run() throws {}
}
