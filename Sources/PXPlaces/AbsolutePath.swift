import DICOMData

/// A path from the command line made absolute against the current directory (px-get's and
/// px-listen's storage root, reported in their output and given to the hook).
public func absolutePath(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    guard let directory = POSIX.currentDirectory() else { return "./" + path }
    return directory + "/" + path
}
